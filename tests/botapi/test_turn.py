"""The bot's ``turn`` (docs/bot-api.md) and what a player knows (R10)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from arena.botapi.turn import PlayerInfo, Turn, public_event, public_history
from arena.errors import IllegalMove
from arena.game.cards import Card, cards
from arena.game.referee import EngineTable, Referee
from arena.game.rules import Rules

C = Card
API_NAMES = [
    "first",
    "seat",
    "hand",
    "top",
    "suit",
    "pile",
    "stock",
    "players",
    "history",
    "rules",
    "puttable",
    "can_put",
    "put",
    "can_draw",
    "draw",
    "can_finish",
    "finish",
    "points",
    "say",
]


def turn_for(game, names=None):
    names = names or [f"p{s}" for s in range(game.n)]
    return Turn(game.move, EngineTable(game, game.mover, names))


class Scripted:
    """A player that runs ``action(turn)`` on each move, then plays like the fallback."""

    def __init__(self, name: str, action=None) -> None:
        self.name = name
        self.action = action
        self.turns: list[Turn] = []
        self.calls: list[tuple[str, Any]] = []

    def start_game(self, info):
        self.calls.append(("start_game", info))

    def end_round(self, result):
        self.calls.append(("end_round", result))

    def end_game(self, result):
        self.calls.append(("end_game", result))

    def close(self):
        pass

    def move(self, turn):
        self.turns.append(turn)
        if self.action:
            self.action(turn)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()


def test_every_api_name_works(scripted_game):
    game = scripted_game(["9s 6h 7h js", "kd"], stock="qs qd", opening="9h", first_move=False)
    turn = turn_for(game)
    for name in API_NAMES:
        assert hasattr(turn, name), name
    assert turn.first is False and turn.seat == 0
    assert turn.hand == tuple(cards("9s 6h 7h js"))
    assert turn.top == C("9h") and turn.suit == "h"
    assert turn.pile == (C("9h"),) and turn.stock == 2
    assert turn.players == (PlayerInfo(0, "p0", 4, 0, 0), PlayerInfo(1, "p1", 1, 0, 0))
    assert isinstance(turn.history, tuple)
    assert turn.rules == Rules()
    assert turn.puttable() == cards("9s 6h 7h js")
    assert turn.can_put("9S") and turn.can_put(C("js")) and not turn.can_put("7s")
    assert not turn.can_put("nonsense") and not turn.can_put(None)
    assert turn.can_draw() and not turn.can_finish()
    assert turn.points() == 20
    turn.put("6H")
    assert turn.top == C("6h") and turn.hand == tuple(cards("9s 7h js"))
    assert not turn.can_finish() and not turn.can_draw()  # 7h covers
    turn.put("js", suit="D")
    assert turn.suit == "d"
    assert turn.can_finish()
    turn.say("hello")
    turn.finish()
    assert game.mover == 1
    assert game.log[-2] == {"event": "say", "seat": 0, "text": "hello"}


def test_draw_returns_the_card(scripted_game):
    game = scripted_game(["7c", "kd"], stock="qs qd", opening="9h", first_move=False)
    turn = turn_for(game)
    assert turn.draw() == C("qs")
    assert turn.stock == 1 and turn.hand == (C("7c"), C("qs"))


def test_first_is_true_on_the_rounds_first_move(scripted_game):
    game = scripted_game(["9s kd", "kc"], stock="qs", opening="9h")
    turn = turn_for(game)
    assert turn.first is True
    assert turn.put_this_move == (C("9h"),)
    assert turn.can_finish()
    turn.finish()
    assert turn_for(game).first is False


@pytest.mark.parametrize(
    "action, rule",
    [
        (lambda t: t.put("7s"), "R4.2"),
        (lambda t: t.put("as"), "R10"),
        (lambda t: t.put("xx"), "R1.2"),
        (lambda t: t.put(42), "R1.2"),
        (lambda t: t.put("js", suit="purple"), "R6.4"),
        (lambda t: t.finish(), "R4.5"),
    ],
)
def test_illegal_move_names_the_rule_and_changes_nothing(scripted_game, snapshot, action, rule):
    game = scripted_game(["9s 7s js", "kd"], stock="qs qd", opening="9h", first_move=False)
    turn = turn_for(game)
    before = snapshot(game)
    with pytest.raises(IllegalMove) as info:
        action(turn)
    assert info.value.rule == rule
    assert snapshot(game) == before
    turn.put("9s")  # the bot may go on
    turn.finish()


def test_actions_after_finish_are_refused(scripted_game, snapshot):
    game = scripted_game(["9s 9c", "9d kd"], stock="qs qd", opening="9h", first_move=False)
    turn = turn_for(game)
    turn.put("9s")
    turn.finish()
    before = snapshot(game)
    for action in (lambda: turn.put("9c"), turn.draw, turn.finish):
        with pytest.raises(IllegalMove) as info:
            action()
        assert info.value.rule == "R4.6"
    assert turn.puttable() == [] and not turn.can_draw() and not turn.can_finish()
    assert snapshot(game) == before
    assert game.mover == 1 and game.hands[0] == [C("9c")]


def test_a_stale_turn_cannot_act_in_a_later_move(scripted_game, snapshot):
    game = scripted_game(["9s 9c kc", "kd"], stock="qs qd qc", opening="9h", first_move=False)
    old = turn_for(game)
    old.put("9s")
    old.finish()
    turn_for(game).draw()
    turn_for(game).finish()  # seat 1's move is done; seat 0 again
    assert game.mover == 0
    before = snapshot(game)
    with pytest.raises(IllegalMove):
        old.put("9c")
    with pytest.raises(IllegalMove):
        old.finish()
    assert snapshot(game) == before


def test_another_seats_table_cannot_act(scripted_game, snapshot):
    game = scripted_game(["9s", "9c"], stock="qs", opening="9h", first_move=False)
    table1 = EngineTable(game, 1, ["a", "b"])
    before = snapshot(game)
    for action in (lambda: table1.act_put(C("9c"), None), table1.act_draw, table1.act_finish):
        with pytest.raises(IllegalMove) as info:
            action()
        assert info.value.rule == "R2.1"
    assert snapshot(game) == before


def test_everything_handed_out_is_a_copy_or_read_only(scripted_game, snapshot):
    game = scripted_game(["9s 7h", "kd"], stock="qs qd", opening="9h", first_move=False)
    turn = turn_for(game)
    before = snapshot(game)
    hand = turn.hand
    assert isinstance(hand, tuple)
    with pytest.raises((TypeError, AttributeError)):
        hand.append(C("as"))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        turn.hand = (C("as"),)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        turn.top = C("as")  # type: ignore[misc]
    puttable = turn.puttable()
    puttable.append(C("as"))
    puttable.clear()
    assert turn.puttable() == cards("9s 7h")
    assert isinstance(turn.pile, tuple) and isinstance(turn.players, tuple)
    with pytest.raises(AttributeError):
        turn.players[0].cards = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        turn.players[0] = None  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.rules.limit = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        turn.rules.points["a"] = 0  # type: ignore[index]
    for event in turn.history:
        with pytest.raises(TypeError):
            event["event"] = "x"  # type: ignore[index]
        for value in event.values():
            assert not isinstance(value, (list, dict, set))
    assert snapshot(game) == before


def test_points_use_the_rules_in_force(scripted_game):
    game = scripted_game(["as 9s", "kd"], opening="9h", rules=Rules(points={"a": 11, "9": 1}))
    assert turn_for(game).points() == 12


def test_say_is_limited(scripted_game):
    game = scripted_game(["9s", "kd"], stock="qs", opening="9h")
    turn = turn_for(game)
    mark = len(game.log)
    turn.say("x" * 500)
    for _ in range(30):
        turn.say("again")
    said = [e for e in game.log[mark:] if e["event"] == "say"]
    assert len(said) == 20 and len(said[0]["text"]) == 200


def test_players_show_counts_scores_and_skips(scripted_game):
    game = scripted_game(["as kd", "kc", "ks 10s"], stock="qs", opening="ah", scores=[5, 6, 7])
    game.put("as")
    game.finish()  # two aces: seats 1 and 2 lose a turn ... both spent now
    turn = turn_for(game)
    assert game.mover == 0
    assert turn.players == (PlayerInfo(0, "p0", 1, 5, 0), PlayerInfo(1, "p1", 1, 6, 0), PlayerInfo(2, "p2", 2, 7, 0))


def test_players_show_pending_lost_turns(scripted_game):
    game = scripted_game(["as kd", "kc"], stock="qs", opening="ah")
    game.put("as")
    game.finish()
    assert [p.skips for p in turn_for(game).players] == [0, 1]


# -- R10: what a player knows ----------------------------------------------------


def test_R10_public_event_hides_cards():
    assert dict(public_event({"event": "draw", "seat": 1, "card": "as"})) == {"event": "draw", "seat": 1}
    assert dict(public_event({"event": "penalty", "seat": 1, "card": "as", "rank": "7"})) == {
        "event": "penalty",
        "seat": 1,
        "rank": "7",
    }
    deal = public_event(
        {
            "event": "deal",
            "round": 2,
            "first": 1,
            "hands": [["6s", "7s"], ["as", "ks"]],
            "stock": ["6d", "7d", "8d"],
            "scores": [3, 4],
        }
    )
    assert dict(deal) == {"event": "deal", "round": 2, "first": 1, "hands": (2, 2), "stock": 3, "scores": (3, 4)}
    assert dict(public_event({"event": "reshuffle", "stock": ["6d", "7d"]})) == {"event": "reshuffle", "stock": 2}
    game = public_event({"event": "game", "version": 1, "game": "1", "seed": 99, "players": [], "rules": {}})
    assert "seed" not in game
    put = public_event({"event": "put", "seat": 0, "card": "jh", "suit": "c"})
    assert dict(put) == {"event": "put", "seat": 0, "card": "jh", "suit": "c"}


def test_R10_history_in_a_real_game_shows_no_hidden_card():
    seen: list[Turn] = []

    def spy(turn):
        history = turn.history
        hand = set(map(str, turn.hand))
        for event in history:
            kind = event["event"]
            assert "seed" not in event
            if kind in ("draw", "penalty"):
                assert "card" not in event
            if kind == "deal":
                assert all(isinstance(h, int) for h in event["hands"])
                assert isinstance(event["stock"], int)
            if kind == "reshuffle":
                assert isinstance(event["stock"], int)
        # every card a bot can see: its own hand, and the cards put this round
        assert set(map(str, turn.pile)) & hand == set()
        seen.append(turn)

    players = [Scripted("a", spy), Scripted("b", spy), Scripted("c", spy)]
    outcome = Referee().play(players, seed=12345, game_id="g")
    assert len(seen) > 50
    kinds = {e["event"] for e in outcome.log}
    assert {"draw", "penalty", "deal", "put", "finish"} <= kinds
    # the last turn's history is the whole public log so far
    last = seen[-1].history
    assert [e["event"] for e in last] == [e["event"] for e in outcome.log[: len(last)]]
    assert last[0]["event"] == "game" and last[0]["game"] == "g"


def test_R10_history_matches_public_history_of_the_log():
    captured: list[tuple] = []

    def grab(turn):
        captured.append(turn.history)

    players = [Scripted("a", grab), Scripted("b")]
    outcome = Referee().play(players, seed=3)
    expected = public_history(outcome.log)
    for history in captured:
        assert [dict(e) for e in history] == [dict(e) for e in expected[: len(history)]]


def test_R10_pile_is_every_card_put_this_round():
    def check(turn):
        history = turn.history
        start = max(i for i, e in enumerate(history) if e["event"] == "deal")
        puts = [e["card"] for e in history[start:] if e["event"] == "put"]
        assert [str(c) for c in turn.pile] == puts
        assert turn.top == turn.pile[-1]

    Referee().play([Scripted("a", check), Scripted("b", check)], seed=8)


def test_history_cannot_change_the_game_record():
    """docs/bot-api.md: everything turn gives out is a copy or read-only; the record must not change."""
    attempts = []

    def vandal(turn):
        head = turn.history[0]
        for target, key, value in (
            (lambda: head["players"][0], "name", "hacked"),
            (lambda: head["rules"], "limit", 1),
            (lambda: head["rules"]["points"], "a", 0),
        ):
            try:
                target()[key] = value
            except (TypeError, AttributeError, KeyError):
                attempts.append("refused")
            else:
                attempts.append("changed")

    clean = Referee().play([Scripted("a"), Scripted("b")], seed=21)
    outcome = Referee().play([Scripted("a", vandal), Scripted("b")], seed=21)
    assert attempts
    assert outcome.log[0] == clean.log[0], "a bot changed the game record through turn.history"
    assert outcome.log == clean.log
    assert set(attempts) == {"refused"}


def test_history_cannot_change_later_games_records():
    """The referee reuses its rules dict; a bot must not reach it through turn.history."""

    def vandal(turn):
        try:
            turn.history[0]["rules"]["points"]["a"] = 0
        except TypeError:
            pass

    referee = Referee()
    referee.play([Scripted("a", vandal), Scripted("b")], seed=1)
    later = referee.play([Scripted("a"), Scripted("b")], seed=2)
    assert later.log[0]["rules"] == Rules().to_dict()
