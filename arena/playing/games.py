"""Playing a match's games: in order in this process, or in parallel (``arena play --workers N``).

Game ``g`` depends only on the master seed and ``g`` (its deal seed and bot key,
:func:`arena.game.seeds.game_seeds`; seats rotated by ``g``), and every sandboxed bot
starts each game with a fresh module namespace and a fresh ``Bot``, so which process
plays a game changes nothing in its record: :class:`GameSource` hands the outcomes
back in game order whatever the number of workers, and the match records and
tallies them in that order (``--sprt`` stops at the same game).

Every entrant plays through *streams* (:class:`~arena.seats.contract.Stream`; a sandboxed
bot's is one game process for game after game), never two games of one deal
(``--sprt`` plays each deal twice, seats swapped: the entrant then has two streams,
one for each game of a pair), seated by :class:`~arena.seats.seating.Seating`. Each worker
process has its own streams.
"""

from __future__ import annotations

import signal
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..game.referee import GameOutcome
from ..game.rules import Rules
from ..game.seeds import GameSeeds
from ..seats.seating import Chair, Seating

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

#: Games handed to each worker ahead of the one the match waits for.
AHEAD = 4


class MatchTable:
    """Plays game ``g`` of a match in this process (entrants: :class:`arena.playing.match.MatchEntrant`),
    each entrant through its streams; a bot's load error is the match's (no stand-ins)."""

    def __init__(
        self, entrants: Sequence[Any], rules: Rules, seed: Any, seeds: Callable[[Any, int], GameSeeds]
    ) -> None:
        self.entrants = list(entrants)
        self.seed = seed
        self.seeds = seeds
        # The record names the code (a file's path, a registered name); the table the entrant's label.
        self.chairs = [
            Chair(i, e.src.label if e.src is not None else "human", e.label) for i, e in enumerate(self.entrants)
        ]
        # nothing in a match reads move times: spared
        self.seating = Seating(lambda i: self.entrants[i].factory, rules=rules, move_times=False, stand_ins=False)

    def play(self, g: int) -> tuple[list[int], GameOutcome]:
        n = len(self.entrants)
        order = [(s + g) % n for s in range(n)]
        outcome = self.seating.play([self.chairs[i] for i in order], self.seeds(self.seed, g), str(g + 1), streams=True)
        return order, outcome

    def close(self) -> None:
        """Stop the streams and the entrants' factories."""
        self.seating.close()


_table: list[MatchTable] = []


def _start_worker(make: Callable[[], MatchTable]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the match's process handles Ctrl-C
    _table.append(make())


def _play(g: int) -> tuple[int, list[int], GameOutcome]:
    order, outcome = _table[0].play(g)
    return g, order, outcome


class GameSource:
    """Game after game of a match, in game order: ``(g, order, outcome)``.

    ``workers`` > 1: played by that many forked processes (each makes its own
    :class:`MatchTable` with ``make``), at most :data:`AHEAD` games each ahead of the match.
    """

    def __init__(self, games: int, make: Callable[[], MatchTable], workers: int = 1) -> None:
        self.games = games
        self.make = make
        self.workers = workers
        self.table: MatchTable | None = None
        self.pool: ProcessPoolExecutor | None = None  # with workers: made on the first game

    def __iter__(self) -> Iterator[tuple[int, list[int], GameOutcome]]:
        if self.workers <= 1 or self.games <= 1:
            self.table = self.make()
            for g in range(self.games):
                order, outcome = self.table.play(g)
                yield g, order, outcome
            return
        import multiprocessing  # noqa: PLC0415 - here: a match in one process never loads the pool
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

        with warnings.catch_warnings():  # the referee's watchdog thread holds no lock a child needs
            warnings.simplefilter("ignore", DeprecationWarning)
            self.pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_start_worker,
                initargs=(self.make,),
            )
            pending: deque[Future[tuple[int, list[int], GameOutcome]]] = deque()
            ahead = self.workers * AHEAD
            submitted = 0
            while submitted < min(ahead, self.games):
                pending.append(self.pool.submit(_play, submitted))
                submitted += 1
        while pending:
            yield pending.popleft().result()
            if submitted < self.games:
                pending.append(self.pool.submit(_play, submitted))
                submitted += 1

    def close(self) -> None:
        """Stop the streams (and the workers: games not yet handed back are dropped)."""
        if self.table is not None:
            self.table.close()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
