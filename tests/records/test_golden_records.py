"""Records stay byte for byte what they were (issue 19): the engine may get faster, never different.

A hash of the record files of a fixed set of games, taken before the engine and the match
loop were sped up, must come out the same after: every table size, every variant, the three
reference bots, and a bot that breaks rules (faults, the fallback, retirement). A change to
what a game does (a shuffle, an event's field order, a rule) changes the hash; a change that
only makes it faster does not.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import arena
from arena.botapi.turn import Turn
from arena.errors import IllegalMove
from arena.game.referee import GameInfo, Referee
from arena.plugins import variants
from arena.seats.loader import load_trusted, resolve_bot

#: (bots, variant, games, seed) of the matches hashed.
MATCHES: list[tuple[list[str], str, int, int]] = [
    (["random", "random"], "contest", 6, 11),
    (["random", "greedy", "random"], "contest", 6, 12),
    (["random"] * 5, "contest", 10, 13),
    (["greedy", "heuristic", "random", "random", "greedy", "random"], "contest", 4, 14),
    (["random"] * 4, "teams", 4, 15),
    (["random"] * 6, "teams", 3, 16),
    (["random", "greedy", "random"], "stacked", 6, 17),
    (["random", "random", "greedy", "random"], "jack-finish", 6, 18),
    (["random"] * 3, "no-burn", 6, 19),
    (["greedy", "random", "random", "random"], "winner-starts", 6, 20),
]

#: sha256 of the compact JSON lines of every record above (as ``--replay`` writes them), and of
#: the games with a rule-breaking bot below: taken from the code before issue 19's speed-up.
GOLDEN_MATCHES = "90ad68895fafb03ad6c5eed6e78dbcecb767abb0686eda5a7cdc148f620a4f8c"
GOLDEN_FAULTS = "1ee320650423c8c6ebeb026a00f718ac596a200ec2b2a7a4a59efed9e3ceceb3"


def digest(games: list[Any]) -> str:
    h = hashlib.sha256()
    for events in games:
        for e in events:
            h.update((json.dumps(e, separators=(",", ":")) + "\n").encode())
    return h.hexdigest()


def test_match_records_are_unchanged() -> None:
    table = variants()
    games = []
    for bots, variant, n, seed in MATCHES:
        games.extend(arena.play(bots, games=n, seed=seed, rules=table[variant]).records)
    assert len(games) == sum(m[2] for m in MATCHES)
    assert digest(games) == GOLDEN_MATCHES


class Breaker:
    """Plays legally most of the time; sometimes puts an unheld card, draws when it may not,
    leaves its move unfinished, raises, or says something: every fault kind of an in-process bot."""

    def __init__(self, seed: int) -> None:
        self.name = "breaker"
        self.rng = random.Random(seed)

    def start_game(self, info: GameInfo) -> None:
        pass

    def move(self, turn: Turn) -> None:
        roll = self.rng.random()
        if roll < 0.03:
            raise RuntimeError("boom")
        if roll < 0.06:
            turn.say(f"roll {roll:.3f}")
            return  # unfinished: the referee finishes it or falls back
        if roll < 0.09:
            try:
                turn.put("ah" if turn.top.rank != "a" else "6s")
            except IllegalMove:
                pass
            turn.draw()  # may be illegal: an exception, a fault
        options = turn.puttable()
        if options:
            turn.put(options[-1], "h")
        elif turn.can_draw():
            turn.draw()
        while not turn.can_finish():
            options = turn.puttable()
            if options:
                turn.put(options[0])
            else:
                turn.draw()
        turn.finish()

    def end_round(self, result: Any) -> None:
        pass

    def end_game(self, result: Any) -> None:
        pass

    def close(self) -> None:
        pass


def test_records_with_faults_are_unchanged() -> None:
    factory = load_trusted(resolve_bot("random"))
    games = []
    for g in range(12):
        n = 2 + g % 5
        seats: list[Any] = [factory(g, s) for s in range(n)]
        seats[g % n] = Breaker(g)
        games.append(Referee().play(seats, seed=100 + g, game_id=str(g + 1)).log)
    kinds = {e["kind"] for events in games for e in events if e["event"] == "fault"}
    assert kinds == {"exception", "illegal-finish", "retired"}
    assert digest(games) == GOLDEN_FAULTS


def test_timing_moves_or_not_changes_no_record() -> None:
    # `arena play` does not time its moves (nothing in a match reads the times): the same games.
    factory = load_trusted(resolve_bot("greedy"))
    timed = Referee().play([factory(4, s) for s in range(3)], seed=9)
    untimed = Referee(move_times=False).play([factory(4, s) for s in range(3)], seed=9)
    assert timed.log == untimed.log and timed.moves == untimed.moves
    assert sum(map(len, timed.move_times)) == timed.moves
    assert untimed.move_times == [[], [], []]
