"""The referee and the fault policy (docs/bot-api.md, "Faults")."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from arena.botapi.turn import Turn
from arena.errors import IllegalMove
from arena.game.cards import DECK, Card, cards
from arena.game.engine import GameResult, RoundResult, place_seats
from arena.game.fallback import fallback_move
from arena.game.referee import BotFault, GameInfo, Referee
from arena.game.rules import Rules
from arena.seats.loader import load_trusted, resolve_bot

C = Card


def play_legally(turn: Turn) -> None:
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


class Bot:
    """A test player: ``behaviour(turn, call_number)`` plays the move (default: legally)."""

    def __init__(
        self, name: str = "bot", behaviour: Callable[[Turn, int], Any] | None = None, notify_error: str | None = None
    ) -> None:
        self.name = name
        self.behaviour = behaviour
        self.notify_error = notify_error
        self.moves = 0
        self.calls: list[tuple[str, Any]] = []

    def _note(self, what: str, arg: Any) -> None:
        self.calls.append((what, arg))
        if self.notify_error == what:
            raise RuntimeError(f"boom in {what}")

    def start_game(self, info: GameInfo) -> None:
        self._note("start_game", info)

    def end_round(self, result: RoundResult) -> None:
        self._note("end_round", result)

    def end_game(self, result: GameResult) -> None:
        self._note("end_game", result)

    def close(self) -> None:
        pass

    def move(self, turn: Turn) -> None:
        self.moves += 1
        if self.behaviour is None:
            play_legally(turn)
        else:
            self.behaviour(turn, self.moves)


def check_log_consistent(log: list[dict]) -> None:
    """Light sanity checks of a finished game's log (the full check is the independent checker)."""
    assert log[0]["event"] == "game" and log[-1]["event"] == "end"
    finishes = sum(e["event"] == "finish" for e in log)
    assert finishes > 0


def faults_of(outcome, seat=None):
    return [(f.seat, f.kind) for f in outcome.faults if seat is None or f.seat == seat]


def test_a_normal_game_completes_without_faults():
    outcome = Referee().play([Bot("a"), Bot("b"), Bot("c")], seed=1, game_id="x")
    assert outcome.faults == [] and outcome.retired == frozenset()
    assert outcome.names == ("a", "b", "c") and outcome.game == "x"
    result = outcome.result
    assert any(s > 125 for s in result.scores) or result.rounds == 200
    assert result.places == place_seats(result.scores)
    check_log_consistent(outcome.log)


def test_exception_is_a_fault_and_the_fallback_completes_the_move():
    def raise_on_third(turn, k):
        if k == 3:
            raise ZeroDivisionError("oops")
        play_legally(turn)

    outcome = Referee().play([Bot("bad", raise_on_third), Bot("ok")], seed=2)
    assert faults_of(outcome) == [(0, "exception")]
    fault = outcome.faults[0]
    assert "ZeroDivisionError" in fault.detail and "oops" in fault.detail
    events = [e for e in outcome.log if e["event"] == "fault"]
    assert events == [{"event": "fault", "seat": 0, "kind": "exception", "detail": fault.detail}]
    # the fault line comes inside seat 0's move, and that move still finishes
    i = outcome.log.index(events[0])
    following = next(e for e in outcome.log[i + 1 :] if e["event"] == "finish")
    assert following["seat"] == 0
    assert outcome.retired == frozenset()
    assert outcome.fault_counts() == [1, 0]
    check_log_consistent(outcome.log)


def test_exception_after_an_own_six_is_covered_by_the_fallback():
    seen = {}

    def six_then_raise(turn, k):
        sixes = [c for c in turn.puttable() if c.rank == "6"]
        if sixes and not seen and not turn.first:
            turn.put(sixes[0])
            seen["put"] = (turn.seat, str(sixes[0]))
            raise RuntimeError("forgot to cover")
        play_legally(turn)

    for seed in range(40):
        seen.clear()
        outcome = Referee().play([Bot("bad", six_then_raise), Bot("ok")], seed=seed)
        if seen:
            break
    assert seen, "no seed let the bot put a six"
    log = outcome.log
    fault_at = next(i for i, e in enumerate(log) if e["event"] == "fault")
    # the six, the fault, then the fallback's cover (draws allowed) and the finish
    put_six = max(i for i, e in enumerate(log[:fault_at]) if e["event"] == "put")
    assert log[put_six]["card"] == seen["put"][1]
    rest = []
    for e in log[fault_at + 1 :]:
        rest.append(e)
        if e["event"] == "finish":
            break
    assert rest[-1] == {"event": "finish", "seat": 0}
    assert any(e["event"] == "put" for e in rest[:-1]), "the six was not covered"
    assert faults_of(outcome) == [(0, "exception")]


def test_returning_when_the_move_cannot_finish_is_an_illegal_finish():
    def do_nothing_once(turn, k):
        if k == 2 and not turn.can_finish():
            return
        play_legally(turn)

    outcome = Referee().play([Bot("lazy", do_nothing_once), Bot("ok")], seed=4)
    assert faults_of(outcome) == [(0, "illegal-finish")]
    assert outcome.faults[0].detail.startswith("R4.5")


def test_returning_on_an_own_six_is_an_illegal_finish_citing_R5_1():
    state = {}

    def six_and_return(turn, k):
        if "done" not in state and not turn.first and turn.stock > 0:
            sixes = [c for c in turn.puttable() if c.rank == "6"]
            if sixes:
                turn.put(sixes[0])
                state["done"] = True
                return
        play_legally(turn)

    for seed in range(40):
        state.clear()
        outcome = Referee().play([Bot("six", six_and_return), Bot("ok")], seed=seed)
        if state:
            break
    assert state
    assert faults_of(outcome) == [(0, "illegal-finish")]
    assert outcome.faults[0].detail.startswith("R5.1")


def test_returning_when_the_move_can_finish_auto_finishes():
    def put_and_return(turn, k):
        options = turn.puttable()
        if turn.first and turn.can_finish():
            return  # the opening counts as a put
        if options:
            turn.put(options[0])
            while not turn.can_finish():
                if turn.puttable():
                    turn.put(turn.puttable()[0])
                else:
                    turn.draw()
        else:
            turn.draw()
        # no finish(): the referee finishes for us

    outcome = Referee().play([Bot("a", put_and_return), Bot("b", put_and_return)], seed=5)
    assert outcome.faults == []
    check_log_consistent(outcome.log)


def test_three_faults_retire_the_bot_and_place_it_last():
    def always_raise(turn, k):
        raise ValueError("nope")

    players = [Bot("ok1"), Bot("bad", always_raise), Bot("ok2"), Bot("ok3")]
    outcome = Referee().play(players, seed=6)
    kinds = faults_of(outcome, 1)
    assert kinds == [(1, "exception")] * 3 + [(1, "retired")]
    assert players[1].moves == 3  # never called again
    assert outcome.retired == frozenset({1})
    assert outcome.fault_counts() == [0, 3, 0, 0]
    result = outcome.result
    assert result.places[1] == 4
    others = [0, 2, 3]
    assert [result.places[s] for s in others] == list(place_seats([result.scores[s] for s in others]))
    retired_events = [e for e in outcome.log if e["event"] == "fault" and e["kind"] == "retired"]
    assert retired_events == [{"event": "fault", "seat": 1, "kind": "retired", "detail": "3 faults"}]
    # notifications stop for a retired bot
    assert [c for c, _ in players[1].calls] == ["start_game"]
    check_log_consistent(outcome.log)


def test_max_faults_setting():
    def always_raise(turn, k):
        raise ValueError("nope")

    bad = Bot("bad", always_raise)
    outcome = Referee(max_faults=5).play([bad, Bot("ok")], seed=6)
    assert bad.moves == 5 and outcome.retired == frozenset({0})


def test_bot_fault_kinds_from_the_runtime():
    def timeout_once(turn, k):
        if k == 1:
            raise BotFault("timeout", "took 2.0 s")
        play_legally(turn)

    def crash(turn, k):
        raise BotFault("crash", "worker died")

    outcome = Referee().play([Bot("slow", timeout_once), Bot("ok")], seed=8)
    assert faults_of(outcome) == [(0, "timeout")]
    assert outcome.faults[0].detail == "took 2.0 s"
    outcome = Referee().play([Bot("ok"), Bot("dead", crash)], seed=8)
    assert faults_of(outcome) == [(1, "crash"), (1, "retired")]
    assert outcome.retired == frozenset({1}) and outcome.result.places[1] == 2


def test_caught_illegal_move_changes_nothing_and_the_bot_goes_on(snapshot):
    checks = []

    def try_illegal_first(turn, k):
        game_hand = turn.hand
        bad = next((c for c in DECK if c not in game_hand), None)
        before = (turn.hand, turn.top, turn.suit, turn.pile, turn.stock, turn.players, len(turn.history))
        for action in (lambda: turn.put(bad), lambda: turn.put("notacard")):
            try:
                action()
            except IllegalMove as exc:
                checks.append(exc.rule)
            else:
                raise AssertionError("illegal put accepted")
        non_matching = [c for c in turn.hand if c not in turn.puttable()]
        if non_matching:
            try:
                turn.put(non_matching[0])
            except IllegalMove as exc:
                checks.append(exc.rule)
        after = (turn.hand, turn.top, turn.suit, turn.pile, turn.stock, turn.players, len(turn.history))
        assert before == after
        play_legally(turn)

    outcome = Referee().play([Bot("tries", try_illegal_first), Bot("ok")], seed=9)
    assert outcome.faults == []
    assert {"R10", "R1.2"} <= set(checks)
    assert set(checks) <= {"R10", "R1.2", "R4.2", "R4.3", "R5.2"}


def test_uncaught_illegal_move_is_an_exception_fault():
    def put_unheld(turn, k):
        if k == 2:
            turn.put(next(c for c in DECK if c not in turn.hand))
        play_legally(turn)

    outcome = Referee().play([Bot("bad", put_unheld), Bot("ok")], seed=10)
    assert faults_of(outcome) == [(0, "exception")]
    assert "IllegalMove" in outcome.faults[0].detail and "R10" in outcome.faults[0].detail


def test_notifications():
    players = [Bot("a"), Bot("b"), Bot("c")]
    outcome = Referee(Rules(limit=60)).play(players, seed=11, game_id="g7")
    rounds = outcome.result.rounds
    for seat, p in enumerate(players):
        kinds = [c for c, _ in p.calls]
        assert kinds == ["start_game"] + ["end_round"] * rounds + ["end_game"]
        info = p.calls[0][1]
        assert info.seat == seat and info.players == ("a", "b", "c") and info.game == "g7"
        assert info.rules == Rules(limit=60)
        assert [r.round for c, r in p.calls if c == "end_round"] == list(range(1, rounds + 1))
        assert p.calls[-1][1] == outcome.result


def test_a_failing_notification_is_a_fault_but_the_game_goes_on():
    players = [Bot("a", notify_error="start_game"), Bot("b", notify_error="end_round")]
    outcome = Referee().play(players, seed=12)
    kinds = faults_of(outcome)
    assert kinds[0] == (0, "exception")
    assert outcome.faults[0].detail.startswith("start_game:")
    assert (1, "exception") in kinds and (1, "retired") in kinds  # end_round fails every round
    assert outcome.result is not None


def test_same_seed_same_game():
    a = Referee().play([Bot("a"), Bot("b"), Bot("c")], seed=99)
    b = Referee().play([Bot("a"), Bot("b"), Bot("c")], seed=99)
    c = Referee().play([Bot("a"), Bot("b"), Bot("c")], seed=100)
    assert a.log == b.log
    assert a.log != c.log


def test_fallback_move_is_legal(scripted_game):
    rng = random.Random(0)
    # nothing matches: the fallback draws and finishes
    game = scripted_game(["7c kd", "qs"], stock="10s 10d", opening="9h", first_move=False)
    fallback_move(game, rng)
    assert [e["event"] for e in game.log[-2:]] == ["draw", "finish"]
    # a match: it puts one
    game = scripted_game(["9c kd", "qs"], stock="10s", opening="9h", first_move=False)
    fallback_move(game, rng)
    assert game.log[-2] == {"event": "put", "seat": 0, "card": "9c"}
    # an own six: it covers, drawing as needed
    game = scripted_game(["6h kd", "qs"], stock="10s 10c kh", opening="9h", first_move=False)
    game.put("6h")
    fallback_move(game, rng)
    assert [e["event"] for e in game.log[-5:]] == ["draw", "draw", "draw", "put", "finish"]
    assert game.pile[-1] == C("kh")
    assert Counter(game.hands[0]) == Counter(cards("kd 10s 10c"))


def test_bot_fault_with_retire_retires_at_once():
    def stopped(turn, k):
        raise BotFault("timeout", "worker killed", retire=True)

    bad = Bot("slow", stopped)
    outcome = Referee().play([Bot("ok"), bad], seed=13)
    assert faults_of(outcome) == [(1, "timeout"), (1, "retired")]
    assert outcome.faults[1].detail == "stopped"
    assert bad.moves == 1 and outcome.retired == frozenset({1})


class ContextSeat:
    """A remote seat (the RemoteSeat protocol) that plays through its SeatContext alone."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.context = None
        self.calls: list[str] = []

    def sit(self, context) -> None:
        self.calls.append("sit")
        self.context = context

    def start_game(self, info) -> None:
        self.calls.append("start_game")

    def play_move(self) -> None:
        self.calls.append("play_move")
        ctx = self.context
        move = ctx.current_move()
        if not move.put and not move.puttable() and move.can_draw():
            ctx.checked_draw()
        while move.puttable() and (not move.put or move.needs_cover()):
            ctx.checked_put(move.puttable()[0], None)
        while move.needs_cover() and not move.can_finish():
            if move.puttable():
                ctx.checked_put(move.puttable()[0], None)
            else:
                ctx.checked_draw()
        ctx.checked_finish()

    def end_round(self, result) -> None:
        self.calls.append("end_round")

    def end_game(self, result) -> None:
        self.calls.append("end_game")

    def close(self) -> None:
        pass


def test_a_remote_seat_gets_its_context_and_never_a_turn(monkeypatch):
    import arena.game.referee as referee_module
    from arena.game.referee import RemoteSeat

    built: list[int] = []
    real_turn = referee_module.Turn

    def counting_turn(move, table):
        built.append(move.seat)
        return real_turn(move, table)

    monkeypatch.setattr(referee_module, "Turn", counting_turn)
    greedy = load_trusted(resolve_bot("greedy"))
    remote = ContextSeat("remote")
    assert isinstance(remote, RemoteSeat)
    outcome = Referee().play([greedy(1, 0), remote, greedy(1, 2)], seed=11)
    assert outcome.faults == []
    assert remote.calls[:2] == ["sit", "start_game"] and remote.calls[-1] == "end_game"
    assert remote.calls.count("play_move") == sum(1 for e in outcome.log if e["event"] == "finish" and e["seat"] == 1)
    assert built and 1 not in built  # Turns for the in-process seats only
