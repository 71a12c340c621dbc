"""Playing a match's games: in order in this process, or in parallel (``arena play --workers N``).

Game ``g`` depends only on the master seed and ``g`` (its deal seed and bot key,
:func:`arena.playing.match.game_seeds`; seats rotated by ``g``), and every sandboxed bot
starts each game with a fresh module namespace and a fresh ``Bot``, so which process
plays a game changes nothing in its record: :class:`GameSource` hands the outcomes
back in game order whatever the number of workers, and the match records and
tallies them in that order (``--sprt`` stops at the same game).

A sandboxed entrant plays through *streams* (:class:`~arena.sandbox.python.factory.Stream`):
one game process of the bot for game after game, never two games of one deal
(``--sprt`` plays each deal twice, seats swapped: the entrant then has two streams,
one for each game of a pair). Each worker process has its own streams.
"""

from __future__ import annotations

import signal
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..game.referee import GameOutcome, Referee

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

#: A stream's process is replaced after this many games (its record of deals played stays small).
STREAM_GAMES = 10_000

#: Games handed to each worker ahead of the one the match waits for.
AHEAD = 4


class Streams:
    """One entrant's streams: each game goes to the first stream that has not played its deal."""

    def __init__(self, factory: Any) -> None:
        self.factory = factory
        self.streams: list[Any] = []

    def seat(self, bot_key: Any, seat: int, deal: Any) -> Any:
        for stream in self.streams:
            if deal not in stream.deals:
                break
        else:
            stream = self.factory.stream()
            self.streams.append(stream)
        if len(stream.deals) >= STREAM_GAMES:  # a fresh process remembers no deal
            stream.close()
            stream.deals.clear()
        return stream(bot_key, seat, deal=deal)

    def close(self) -> None:
        for stream in self.streams:
            stream.close()


class Table:
    """Plays game ``g`` of a match in this process (entrants: :class:`arena.playing.match.Entrant`)."""

    def __init__(self, entrants: Sequence[Any], referee: Referee, seed: Any, seeds: Callable[[Any, int], Any]) -> None:
        self.entrants = list(entrants)
        self.referee = referee
        self.seed = seed
        self.seeds = seeds
        self.names = [e.src.label if e.src is not None else "human" for e in self.entrants]
        self.streams = [Streams(e.factory) if hasattr(e.factory, "stream") else None for e in self.entrants]

    def play(self, g: int) -> tuple[list[int], GameOutcome]:
        n = len(self.entrants)
        order = [(s + g) % n for s in range(n)]
        game_seed, bot_key = self.seeds(self.seed, g)
        players = []
        try:
            for s, i in enumerate(order):
                streams = self.streams[i]
                player = (
                    self.entrants[i].factory(bot_key, s) if streams is None else streams.seat(bot_key, s, game_seed)
                )
                player.name = self.entrants[i].label  # the table shows the entrant's label
                players.append(player)
            outcome = self.referee.play(
                players, seed=game_seed, game_id=str(g + 1), bots=[self.names[i] for i in order]
            )
        finally:
            for p in players:
                p.close()
        return order, outcome

    def close(self) -> None:
        for streams in self.streams:
            if streams is not None:
                streams.close()


_table: list[Table] = []


def _start_worker(make: Callable[[], Table]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the match's process handles Ctrl-C
    _table.append(make())


def _play(g: int) -> tuple[int, list[int], GameOutcome]:
    order, outcome = _table[0].play(g)
    return g, order, outcome


class GameSource:
    """Game after game of a match, in game order: ``(g, order, outcome)``.

    ``workers`` > 1: played by that many forked processes (each makes its own
    :class:`Table` with ``make``), at most :data:`AHEAD` games each ahead of the match.
    """

    def __init__(self, games: int, make: Callable[[], Table], workers: int = 1) -> None:
        self.games = games
        self.make = make
        self.workers = workers
        self.table: Table | None = None
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
