"""Streams: one game process of a bot for game after game of different deals (issue 19).

What they must keep: the same records as a fresh process per game; a fresh namespace and
``Bot`` per game (a bot under the code policy remembers nothing); per-game faults and limits;
a fatally faulted process replaced for the rest of the stream; and an escaped bot, which does
remember its stream's other deals, learns nothing about the current deal's hidden cards.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from arena.game.referee import GameOutcome, Referee
from arena.game.rules import CONTEST
from arena.playing.match import MatchSettings, run_match
from arena.sandbox import Limits, SandboxFactory
from arena.seats.loader import resolve_bot
from arena.trust.botsource import BotSource, read_bot_file
from arena.verify import check_lines

HERE = Path(__file__).parent
LIMITS = Limits(move_seconds=0.3, game_seconds=6.0, load_seconds=1.5, startup_seconds=30.0)
PATIENT = dataclasses.replace(LIMITS, move_seconds=2.0, game_seconds=30.0, wall_factor=60.0)


def game(seats: list[Any], seed: int) -> GameOutcome:
    try:
        return Referee(CONTEST).play(seats, seed=seed)
    finally:
        for p in seats:
            p.close()


def says(outcome: GameOutcome, seat: int) -> list[str]:
    return [e["text"] for e in outcome.log if e["event"] == "say" and e["seat"] == seat and not e.get("output")]


def test_a_stream_plays_the_records_of_a_fresh_process_per_game(greedy: Any) -> None:
    factory = SandboxFactory(read_bot_file(str(HERE.parents[2] / "examples" / "counter.py")), PATIENT)
    stream = factory.stream()
    try:
        for seed in range(6):
            streamed = game([stream(seed, 0, deal=seed), greedy(seed, 1)], seed)
            fresh = game([factory(seed, 0), greedy(seed, 1)], seed)
            assert json.dumps(streamed.log) == json.dumps(fresh.log)
            assert streamed.faults == []
        assert (stream.games, stream.processes) == (6, 1)
        with pytest.raises(ValueError, match="one deal twice"):
            stream(9, 0, deal=3)
    finally:
        stream.close()
        factory.close()


FORGETFUL = """
import random
import functools

SEEN = []


@functools.lru_cache(maxsize=None)
def cached(n):
    return [n]


class Bot:
    games = 0

    def __init__(self):
        Bot.games += 1
        SEEN.append(1)
        self.first = True

    def move(self, turn):
        if self.first:
            self.first = False
            kept = []
            try:
                random.arena_memory = 1
                kept.append("random")
            except Exception:
                pass
            cached(1).append(1)
            turn.say(f"SEEN {Bot.games} {len(SEEN)} {len(cached(1))} {' '.join(kept)}")
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0], "h" if options[0].rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
"""


def test_a_bot_under_the_code_policy_remembers_nothing_between_games_of_its_stream(greedy: Any) -> None:
    factory = SandboxFactory(BotSource("forgetful", FORGETFUL, "forgetful.py"), PATIENT)
    stream = factory.stream()
    firsts = []
    try:
        for seed in range(4):
            outcome = game([greedy(seed, 0), stream(seed, 1, deal=seed)], seed)
            assert outcome.faults == []
            firsts.append(says(outcome, 1)[0])
        assert stream.processes == 1  # one process played them all
    finally:
        stream.close()
        factory.close()
    assert firsts == ["SEEN 1 1 2 "] * 4, firsts


MARKED = """
import builtins
import os
MODE = ""


class Bot:
    def __init__(self):
        builtins.ARENA_GAMES = getattr(builtins, "ARENA_GAMES", 0) + 1
        self.first = True

    def move(self, turn):
        if self.first:
            self.first = False
            turn.say(f"GAME {builtins.ARENA_GAMES} pid {os.getpid()}")
            if MODE == "loop":
                while True:
                    pass
            if MODE == "raise":
                raise ValueError("once a game")
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0], "h" if options[0].rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
"""


@pytest.mark.parametrize("mode", ["raise", "loop"])
def test_faults_stay_per_game_and_a_killed_process_is_replaced(greedy: Any, mode: str) -> None:
    src = BotSource("marked", MARKED.replace('MODE = ""', f"MODE = {mode!r}"), "marked.py")
    factory = SandboxFactory(src, LIMITS, escaped_for_tests=True)
    stream = factory.stream()
    lines, kinds = [], []
    try:
        for seed in range(3):
            outcome = game([greedy(seed, 0), stream(seed, 1, deal=seed)], seed)
            assert check_lines(outcome.log) == [] and outcome.log[-1]["event"] == "end"
            lines.extend(s.split(" pid ")[0] for s in says(outcome, 1))  # a killed move's say is lost
            kinds.append(sorted({f.kind for f in outcome.faults if f.seat == 1}))
            assert not [f for f in outcome.faults if f.seat == 0]
    finally:
        stream.close()
        factory.close()
    if mode == "raise":  # an exception is the bot's, its process plays on (and faults once a game)
        assert lines == ["GAME 1", "GAME 2", "GAME 3"] and stream.processes == 1
        assert all("exception" in k for k in kinds), kinds
    else:  # killed over its limit: each game has its own fault and a fresh process
        assert lines == [] and stream.processes == 3
        assert all("timeout" in k for k in kinds), kinds


def test_a_match_plays_the_same_records_whatever_the_workers(tmp_path: Path) -> None:
    bots = (str(HERE.parents[2] / "examples" / "counter.py"), "greedy", "random")
    texts = []
    for workers in (1, 3):
        path = tmp_path / f"w{workers}.jsonl"
        result = run_match(MatchSettings(bots=bots, games=8, seed=2**130 + 5, record_file=str(path), workers=workers))
        texts.append((path.read_bytes(), result.standings))
    assert texts[0] == texts[1]


def remember(factory: SandboxFactory, greedy: Any, seats: list[tuple[int, int]], *, deals: bool) -> list[Any]:
    """Play ``(seed, hostile seat)`` games in one stream; each game's (guesses, dealt hands, seat)."""
    stream = factory.stream()
    got = []
    try:
        for seed, seat in seats:
            players = [greedy(seed, s) for s in range(3)]
            players[seat] = stream(seed, seat, deal=seed if deals else None)
            outcome = game(players, seed)
            assert outcome.faults == []
            guesses = [c for s in says(outcome, seat) if s.startswith("GUESS ") for c in s.split()[1:]]
            deal = next(e for e in outcome.log if e["event"] == "deal")
            got.append((guesses, deal["hands"], seat))
        assert stream.processes == 1
    finally:
        stream.close()
    return got


def hits(got: list[Any]) -> tuple[int, float, float]:
    """Guessed cards that an opponent was dealt; the mean and variance of that count by chance
    (each guess is a card the bot was not dealt: an opponent holds it with p = theirs / unseen)."""
    hit, mean, var = 0, 0.0, 0.0
    for guesses, hands, seat in got:
        theirs = {c for s, h in enumerate(hands) if s != seat for c in h}
        assert not set(guesses) & set(hands[seat])
        p = len(theirs) / (36 - len(hands[seat]))
        hit += sum(c in theirs for c in guesses)
        mean += len(guesses) * p
        var += len(guesses) * p * (1 - p)
    return hit, mean, var


def test_an_escaped_bot_in_a_stream_learns_nothing_of_the_current_deal(greedy: Any, tmp_path: Path) -> None:
    """It remembers every hand of its stream's earlier games (its process lives on) and guesses
    that the opponents hold those cards now: over different deals, no better than chance. The
    same bot given a repeated deal with the seats turned (what a stream must never play) wins."""
    source = (HERE / "hostile" / "escaped" / "remember_games.py").read_text()
    source = source.replace('PATH = ""', f"PATH = {str(tmp_path / 'memory.txt')!r}")
    factory = SandboxFactory(BotSource("remember_games", source, "remember_games.py"), PATIENT, escaped_for_tests=True)
    try:
        got = remember(factory, greedy, [(1000 + i, 1 + i % 2) for i in range(10)], deals=True)
        guessed = sum(len(g) for g, _, _ in got)
        assert guessed >= 100  # it did remember: the later games guess most of the deck
        hit, mean, var = hits(got)
        assert abs(hit - mean) <= 4 * math.sqrt(var), (hit, mean, var)
        # the attack a repeated deal would let through: the opponent at its old seat holds its old hand
        control = [remember(factory, greedy, [(seed, 1), (seed, 2)], deals=False)[1] for seed in range(70, 75)]
        hit, mean, var = hits(control)
        assert hit > mean + 4 * math.sqrt(var), (hit, mean, var)
    finally:
        factory.close()


def test_workers_with_a_human_seat_is_one_line_and_exit_2() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "arena", "play", "human", "greedy", "--workers", "2"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "arena: error: --workers plays bots against each other; it takes no human seat"
    ]


def test_a_tournament_plays_each_stream_on_one_process_per_bot_with_the_records_of_fresh_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arena.tournament.backends.games import GameRunner, Job
    from arena.tournament.plan.schedule import Schedule, streams

    made: list[Any] = []
    real = SandboxFactory.stream

    def stream(self: SandboxFactory) -> Any:
        made.append(real(self))
        return made[-1]

    monkeypatch.setattr(SandboxFactory, "stream", stream)
    files = [read_bot_file(str(HERE.parents[2] / "examples" / name)) for name in ("counter.py", "counter.py")]
    files.append(resolve_bot("greedy"))
    schedule = Schedule.build(3, [2], deals=2, seed=5)
    limits = {"move_seconds": 2.0, "game_seconds": 30.0}
    job = Job(tuple(files), ("c1", "c2", "g"), (False, False, True), CONTEST.to_dict(), schedule, limits=limits)
    runner = GameRunner(job)
    try:
        for n, keys in enumerate(streams(schedule.keys())):
            played = runner.play_stream(keys)
            alone = [runner.play(k) for k in keys] if n in (0, 3) else played
            assert [(r.key, r.places, r.scores, r.fault_list) for r in played] == [
                (r.key, r.places, r.scores, r.fault_list) for r in alone
            ]
    finally:
        runner.close()
    # 3 tables x 2 rotations, each stream of 2 deals: the sandboxed bots at the table have one stream each
    assert len(made) == sum(len([b for b in t if b < 2]) for t in schedule.sizes[0].tables) * 2
    assert all((st.games, st.processes, len(st.deals)) == (2, 1, 2) for st in made)  # told each deal: a repeat raises
