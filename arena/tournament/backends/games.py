"""Playing one scheduled game, wherever it runs (the parent, a worker process, a Ray task).

A :class:`Job` holds everything a worker needs (bot sources, rules, the
schedule) and pickles; :class:`GameRunner` turns a :class:`GameKey` into a
:class:`GameRecord`, through a :class:`~arena.seats.seating.Seating` that keeps each
bot's seat factory for the next game. A bot that cannot be loaded does not stop the
tournament: it plays as a :class:`~arena.seats.seating.CrashedPlayer`, which the referee
records as a crash (the seat retires and places last, the fallback plays its cards).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...game.rules import Rules
from ...seats.contract import SeatFactory
from ...seats.factories import make_factory
from ...seats.seating import Chair, Seating
from ...trust.botsource import BotSource
from ...trust.text import storable
from ..plan.schedule import GameKey, Schedule, streams
from ..results.finished import GameResult, SeatResult


@dataclass(frozen=True)
class Job:
    """A tournament as a worker sees it."""

    sources: tuple[BotSource, ...]
    labels: tuple[str, ...]
    trusted: tuple[bool, ...]
    rules: dict[str, Any]  # Rules.to_dict(): a Rules value does not pickle
    schedule: Schedule
    keep_logs: bool = False
    #: Names this job for the per-process runner cache (the database's settings digest).
    ident: str = ""
    #: Changes to the sandbox's default :class:`~arena.sandbox.Limits` (``move_seconds``, ``game_seconds``).
    limits: dict[str, Any] = field(default_factory=dict)


@dataclass
class GameRecord:
    """One finished game as a worker sends it back: its :meth:`result` and what only the
    writer keeps (fault details, move times, the record's events for ``--replays``)."""

    key: GameKey
    seed: int
    seating: tuple[int, ...]  # bot index per seat
    places: tuple[int, ...]  # per seat
    scores: tuple[int, ...]
    losers: tuple[int, ...]  # seats
    faults: tuple[int, ...]  # fault count per seat (retirements not counted)
    retired: tuple[int, ...]  # seats
    fault_list: list[tuple[int, str, str, int]] = field(default_factory=list)  # (seat, kind, detail, round)
    rounds: int = 0
    moves: int = 0
    duration: float = 0.0
    log: list[dict[str, Any]] | None = None
    #: per seat: (moves, total seconds, worst seconds) of the bot's own moves
    seat_times: tuple[tuple[int, float, float], ...] = ()

    def result(self) -> GameResult:
        """The game's result, as the database gives it back (so fresh and stored games are judged alike)."""
        seats = tuple(
            SeatResult(bot, self.places[s], self.scores[s], s in self.losers, self.faults[s], s in self.retired)
            for s, bot in enumerate(self.seating)
        )
        return GameResult(self.key, seats, self.seed, self.rounds, self.moves)


#: What one idle sandboxed bot costs a runner: its template process (measured at 11-13 MiB private).
TEMPLATE_BYTES = 16 * 2**20
#: The fewest templates a runner keeps, whatever the memory.
MIN_KEEP = 12


def template_budget(available: int | None = None, cpus: int | None = None) -> int:
    """How many bots' templates one runner keeps: as many as fit in a quarter of the memory
    available now, shared by one runner per CPU, and at least :data:`MIN_KEEP`.

    Restarting an evicted template costs a fresh interpreter (about 0.1-0.3 s of CPU), so in a
    30-bot final a runner that kept 12 started 28,555 templates over the 339,300 games; keeping
    the whole field starts 30."""
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):  # pragma: no cover - no sysconf: keep the floor
            available = 0
    cpus = cpus or os.cpu_count() or 1
    return max(MIN_KEEP, available // 4 // cpus // TEMPLATE_BYTES)


class GameRunner:
    """Plays the games of one :class:`Job`; one per worker process.

    Factories are kept for the next game, but at most ``keep`` of those that hold
    processes (a sandboxed bot keeps its template process): by default as many as the
    memory allows (:func:`template_budget`), so a whole field's templates live for the whole
    run; beyond that the least recently used is closed, so memory stays bounded.
    """

    def __init__(self, job: Job, keep: int | None = None) -> None:
        self.job = job
        self.keep = template_budget() if keep is None else keep
        self.seating = Seating(self._make, rules=Rules.from_dict(job.rules), keep=self.keep)
        self._limits: Any = None
        #: The game being played (or the last one played).
        self.playing: GameKey | None = None

    def _make(self, bot: int) -> SeatFactory:
        if self._limits is None and not self.job.trusted[bot]:
            from ...sandbox.limits import Limits

            self._limits = Limits(**self.job.limits)
        return make_factory(self.job.sources[bot], trusted=self.job.trusted[bot], limits=self._limits)

    def close(self) -> None:
        """Release what the factories hold (sandbox worker processes)."""
        self.seating.close()

    def play(self, key: GameKey) -> GameRecord:
        """Play the game ``key`` alone (each sandboxed bot in a fresh process) and return its record."""
        return self._play(key, False)

    def play_stream(self, keys: Sequence[GameKey], stop: Callable[[], bool] | None = None) -> list[GameRecord]:
        """Play one stream's games (:func:`~arena.tournament.plan.schedule.streams`: one rotation of a table over
        different deals) in order, each sandboxed bot in one process for all of them
        (:class:`~arena.sandbox.python.factory.Stream`, told each game's deal); their records, or []
        when ``stop()`` turned true between two of its games (a stream is stored whole or not
        at all). :attr:`playing` names the game being played when one raises."""
        try:
            records: list[GameRecord] = []
            for key in keys:
                if stop is not None and records and stop():
                    return []
                records.append(self._play(key, True))
            return records
        finally:
            self.seating.close_streams()

    def _play(self, key: GameKey, streams: bool) -> GameRecord:
        self.playing = key
        schedule = self.job.schedule
        seeds = schedule.seeds(key)
        seating = schedule.seating(key)
        started = time.perf_counter()
        labels = self.job.labels  # clean, distinct, never a reserved name
        chairs = [Chair(bot, labels[bot], labels[bot]) for bot in seating]
        outcome = self.seating.play(chairs, seeds, str(key), streams=streams)
        seed = seeds.deal
        result = outcome.result
        return GameRecord(
            key=key,
            seed=seed,
            seating=seating,
            places=tuple(result.places),
            scores=tuple(result.scores),
            losers=tuple(result.losers),
            faults=tuple(outcome.fault_counts()),
            retired=tuple(sorted(outcome.retired)),
            fault_list=[(f.seat, f.kind.value, storable(f.detail), f.round) for f in outcome.faults],
            rounds=result.rounds,
            moves=outcome.moves,
            duration=time.perf_counter() - started,
            log=outcome.log if self.job.keep_logs else None,
            seat_times=tuple((len(t), sum(t), max(t, default=0.0)) for t in outcome.move_times),
        )


_RUNNERS: dict[str, GameRunner] = {}


def play_chunk(job: Job, keys: Sequence[GameKey]) -> list[GameRecord]:
    """Play ``keys`` stream by stream (the entry point of a Ray task); a process keeps its runner
    (and so the bots' factories) from one task of the same job to the next."""
    runner = _RUNNERS.get(job.ident) if job.ident else None
    if runner is None:
        _RUNNERS.clear()
        runner = GameRunner(job)
        if job.ident:
            _RUNNERS[job.ident] = runner
    return [record for stream in streams(GameKey(*k) for k in keys) for record in runner.play_stream(stream)]
