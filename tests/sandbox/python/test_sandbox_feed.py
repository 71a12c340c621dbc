"""The game process's copy of the public history (R10): the pile kept from it as events
arrive, the bot's own provisional events, read-only events, and ``players()`` kept per hand size.

The end-to-end proof that a sandboxed bot sees exactly what an in-process bot sees is in
tests/sandbox/python/test_sandbox.py (identical records for a bot that prints everything it sees); these
pin down the incremental bookkeeping that replaced rebuilding the view from the whole history.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from arena.botapi.turn import PlayerInfo, Turn
from arena.game.cards import Card
from arena.game.moves import Move
from arena.game.rules import Rules
from arena.sandbox.python.botloop import Feed, ViewTable

DEAL = {"event": "deal", "round": 1, "first": 0, "hands": [5, 5], "stock": 20, "scores": (0, 0)}


def put(seat: int, card: str, suit: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"event": "put", "seat": seat, "card": card}
    if suit is not None:
        event["suit"] = suit
    return event


def test_R10_the_pile_is_every_card_put_since_the_last_deal() -> None:
    feed = Feed()
    feed.add([DEAL, put(0, "7h"), {"event": "draw", "seat": 1}, put(1, "7s")])
    assert feed.pile() == (Card("7h"), Card("7s"))
    feed.add([put(0, "js", "h"), {"event": "finish", "seat": 0}])
    assert feed.pile() == (Card("7h"), Card("7s"), Card("js"))
    feed.add([{"event": "round", "round": 1}, dict(DEAL, round=2), put(1, "ac")])
    assert feed.pile() == (Card("ac"),)  # a new deal starts a new pile
    assert len(feed.history()) == 9


def test_the_bots_own_actions_show_at_once_and_give_way_to_the_logged_events() -> None:
    feed = Feed()
    feed.add([DEAL, put(0, "7h")])
    feed.provisional(put(1, "7s"), Card("7s"))
    feed.provisional({"event": "draw", "seat": 1})
    assert feed.pile() == (Card("7h"), Card("7s"))
    assert [e["event"] for e in feed.history()] == ["deal", "put", "put", "draw"]
    # the referee's delta holds the logged events, the provisional ones among them
    feed.add([put(1, "7s"), {"event": "draw", "seat": 1}])
    assert feed.pile() == (Card("7h"), Card("7s"))
    assert [e["event"] for e in feed.history()] == ["deal", "put", "put", "draw"]
    feed.provisional(put(1, "8s"), Card("8s"))
    feed.end_move()  # a move that ended: nothing provisional is left over
    assert feed.pile() == (Card("7h"), Card("7s"))
    assert len(feed.history()) == 4


def test_R10_history_events_are_read_only_and_changing_them_changes_nothing() -> None:
    feed = Feed()
    feed.add([DEAL, put(0, "7h")])
    feed.provisional(put(1, "7s"), Card("7s"))
    history = feed.history()
    for event in history:
        assert isinstance(event, MappingProxyType)
        with pytest.raises(TypeError):
            event["card"] = "as"  # type: ignore[index]
    assert type(history[0]["hands"]) is tuple and type(history[0]["scores"]) is tuple
    assert feed.history()[0] is history[0]  # made read-only once, not per read
    assert feed.pile() == (Card("7h"), Card("7s"))


class _FakeWorker:
    """What a ViewTable needs of its worker, without a pipe."""

    def __init__(self) -> None:
        self.names = ("me", "you")
        self.rules = Rules()
        self.feed = Feed()
        self.sent: list[Any] = []

    def act(self, action: list[Any]) -> None:
        self.sent.append(action)


def test_players_follow_the_movers_hand_size_and_freeze_when_the_move_ends() -> None:
    w = _FakeWorker()
    move = Move(0, [Card("7h"), Card("7s"), Card("9c")], Card("10h"), "h", stock=10, pile_size=3)
    table = ViewTable(w, move, [3, 4, 10, 20, 0, 1], None)  # type: ignore[arg-type]
    turn = Turn(move, table)
    assert turn.players == (PlayerInfo(0, "me", 3, 10, 0), PlayerInfo(1, "you", 4, 20, 1))
    assert turn.players is turn.players  # made once while the hand does not change
    turn.put("7h")
    assert [p.cards for p in turn.players] == [2, 4]
    turn.put("7s")
    assert [p.cards for p in turn.players] == [1, 4]
    turn.finish()
    table.open = False  # the move is over: the counts are the view's again
    assert [p.cards for p in turn.players] == [3, 4]
    assert w.sent == [["p", "7h", None], ["p", "7s", None], ["f"]]


def test_R10_a_bot_that_reads_only_the_pile_gets_its_new_cards_and_a_new_round_starts_afresh() -> None:
    feed = Feed()
    feed.add_pile(True, ["7h", "7s"])
    feed.prov_cards.append(Card("8s"))  # the bot's own put in the move in progress
    assert feed.pile() == (Card("7h"), Card("7s"), Card("8s"))
    feed.end_move()
    feed.add_pile(False, ["8s", "8c"])  # the next view: its own put, logged, and another seat's
    assert feed.pile() == (Card("7h"), Card("7s"), Card("8s"), Card("8c"))
    feed.add_pile(True, ["ad"])  # a new round
    assert feed.pile() == (Card("ad"),)
    assert feed.history() == ()  # no events were sent at all


#: Reads only the pile for its first moves (and after its own puts and draws), then the history
#: too, and says what it saw each time: the record shows what each mode showed it.
PILE_THEN_HISTORY = '''
"""Says the pile it sees."""


class Bot:
    moves = 0

    def move(self, turn):
        self.moves += 1
        turn.say("pile " + " ".join(map(str, turn.pile)))
        if self.moves > 6:
            turn.say("history %d, last %s" % (len(turn.history), turn.history[-1]["event"]))
        if not turn.puttable() and turn.can_draw():
            turn.draw()
            turn.say("drew; pile %d" % len(turn.pile))
        while True:
            options = turn.puttable()
            if options:
                card = options[0]
                turn.put(card, "s" if card.rank == "j" else None)
                turn.say("after put: pile %s" % " ".join(map(str, turn.pile)))
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


def test_R10_the_pile_alone_then_the_history_show_exactly_what_they_show_in_process() -> None:
    from test_sandbox import play

    from arena.game.rules import CONTEST
    from arena.sandbox import Limits, SandboxFactory
    from arena.seats.loader import load_trusted, resolve_bot
    from arena.trust.botsource import BotSource

    src = BotSource("piler", PILE_THEN_HISTORY, "piler.py")
    sandboxed = SandboxFactory(src, Limits(move_seconds=0.5, game_seconds=10.0, load_seconds=2.0))
    trusted = load_trusted(src)
    greedy = load_trusted(resolve_bot("greedy"))
    rules = CONTEST.replace(limit=60, name="short")

    try:
        for seed in (5, 6):
            a = play([sandboxed, greedy, sandboxed], seed, rules)
            b = play([trusted, greedy, trusted], seed, rules)
            assert a.faults == []
            assert a.log == b.log
            said = [e["text"] for e in a.log if e["event"] == "say"]
            assert any(t.startswith("after put: pile ") for t in said)
            assert any(t.startswith("history ") for t in said)
            assert sum(1 for e in a.log if e["event"] == "deal") >= 2  # the pile across rounds
    finally:
        sandboxed.close()
