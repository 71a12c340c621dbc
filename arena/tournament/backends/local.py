"""The local backend: games in worker processes on this machine (or in this process).

Each worker is a ``spawn``-ed process (no fork of a parent that may hold
threads) with its own pipe. The parent hands out chunks of whole streams
(:func:`~arena.tournament.plan.schedule.streams`; a worker holds the chunk it plays and the next
one), and finished streams come back as they end, a few together when they
end within 20 ms, so the parent (the database's only writer) stores each
stream whole, in one transaction: after a kill -9 a stream is stored or
not, and a resume re-runs the missing ones from their start. A worker that dies has its
unfinished games handed out again.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Generator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from ..plan.schedule import GameKey, stream_chunks, streams
from .games import GameRecord, GameRunner, Job

#: A worker sends what it finished at least this often (and at the end of each chunk).
FLUSH_SECONDS = 0.02

Batches = Generator[list[GameRecord], None, None]


class HarnessError(RuntimeError):
    """A game could not be played for a reason that is not a bot's fault."""


def chunk_size(games: int, workers: int) -> int:
    """Big enough that per-chunk overhead is small, small enough to share the tail evenly."""
    return max(1, min(32, games // (workers * 8)))


#: Asked for the next keys once every key handed out so far has come back (and been
#: stored by the consumer); an empty answer ends the run (adaptive tournaments).
More = Callable[[], Sequence[GameKey]]


def in_process(job: Job, keys: Sequence[GameKey], stop: Callable[[], bool], more: More | None = None) -> Batches:
    """Play every stream here, one after another (``--workers 1``), and hand them over
    every :data:`FLUSH_SECONDS` like a worker does."""
    runner = GameRunner(job)
    sent = time.monotonic()
    try:
        while keys and not stop():
            done: list[GameRecord] = []
            for stream in streams(keys):
                if stop():
                    break
                done.extend(runner.play_stream(stream, stop))  # [] when stopped within it
                if time.monotonic() - sent >= FLUSH_SECONDS:
                    yield done
                    done, sent = [], time.monotonic()
            if done:
                yield done
            keys = more() if more is not None and not stop() else ()
    finally:
        runner.close()


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(0)  # unwinds through the game's and the runner's clean-up


def pin_worker(number: int) -> None:
    """Worker ``number`` keeps to CPU ``number mod cores``: its sandboxed bots inherit the
    affinity and run beside it (see ``Limits.same_cpu``), and two workers never share a CPU
    while there are CPUs enough."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return
    from ...sandbox.limits import pin_to_one_cpu

    pin_to_one_cpu(cpus[number % len(cpus)])


def worker_main(conn: Connection, job: Job, number: int = 0) -> None:
    """A worker process: play the chunks the parent sends; send back finished streams as they
    end, several together when they end within :data:`FLUSH_SECONDS` of each other."""
    pin_worker(number)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, _terminate)  # ... and stops a busy worker with SIGTERM
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked while we started
    runner = GameRunner(job)
    try:
        while True:
            keys = conn.recv()
            if keys is None:
                return
            done: list[GameRecord] = []
            sent = time.monotonic()
            for stream in streams(GameKey(*key) for key in keys):
                try:
                    done.extend(runner.play_stream(stream))
                except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops
                    conn.send(("games", done))
                    conn.send(("error", tuple(runner.playing or stream[0]), f"{type(exc).__name__}: {exc}"))
                    return
                if time.monotonic() - sent >= FLUSH_SECONDS:
                    conn.send(("games", done))
                    done, sent = [], time.monotonic()
            conn.send(("games", done))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the parent is gone
    finally:
        runner.close()  # multiprocessing children skip atexit: stop sandbox workers here


class _Worker:
    def __init__(self, ctx: Any, job: Job, number: int) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=worker_main, args=(child, job, number), name=f"arena-worker-{number}", daemon=True
        )
        # A Ctrl-C reaches the whole process group; one that came while a worker starts
        # up would kill it with a traceback. The worker inherits a blocked SIGINT and
        # unblocks it once it ignores it; the parent gets its own Ctrl-C when it unblocks.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        child.close()
        self.pending: deque[GameKey] = deque()  # sent, not yet back, in playing order

    def send(self, keys: list[GameKey]) -> None:
        self.conn.send([tuple(k) for k in keys])
        self.pending.extend(keys)

    def stop(self, timeout: float = 5.0) -> None:
        """An idle worker is told to finish; a busy one gets SIGTERM (it cleans up and
        exits at once, dropping its game); one that does not exit in time is killed."""
        if self.pending or not self.process.is_alive():
            self.process.terminate()
        else:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                self.process.terminate()
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def in_pool(
    job: Job,
    keys: Sequence[GameKey],
    workers: int,
    stop: Callable[[], bool],
    *,
    start_method: str = "spawn",
    more: More | None = None,
) -> Batches:
    """Play ``keys`` on ``workers`` processes; yield the games that have ended, a batch at a time."""
    ctx = multiprocessing.get_context(start_method)
    if start_method != "fork":
        # started now, not by the first worker's start: starting it unblocks SIGINT
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    size = chunk_size(len(keys), workers)
    todo: deque[list[GameKey]] = deque(stream_chunks(keys, size))
    pool = [_Worker(ctx, job, i) for i in range(workers if more is not None else min(workers, len(todo)))]
    deaths = 0
    try:
        while not stop():
            if not todo and not any(w.pending for w in pool):
                nxt = list(more()) if more is not None else []
                if not nxt:
                    break
                size = chunk_size(len(nxt), workers)
                todo.extend(stream_chunks(nxt, size))
            for w in pool:
                while todo and len(w.pending) <= size:  # one chunk playing, the next one waiting
                    w.send(todo.popleft())
            ready = wait([w.conn for w in pool], timeout=0.2)  # a dead worker's pipe is ready too
            batch: list[GameRecord] = []
            error = None
            for i, w in enumerate(pool):
                if w.conn not in ready:
                    continue
                try:
                    while w.conn.poll():
                        message = w.conn.recv()
                        if message[0] == "error":
                            error = HarnessError(f"game {GameKey(*message[1])}: {message[2]}")
                            break
                        for record in message[1]:
                            w.pending.remove(record.key)
                        batch.extend(message[1])
                except (EOFError, OSError):
                    deaths += 1
                    w.process.join(1)
                    if deaths > workers + 2:
                        raise HarnessError(
                            f"worker processes keep dying (last exit code {w.process.exitcode})"
                        ) from None
                    if w.pending:
                        todo.appendleft(list(w.pending))
                    w.pending.clear()
                    w.stop()
                    pool[i] = _Worker(ctx, job, len(pool) + deaths)
            if batch:
                yield batch
            if error:
                raise error
    finally:
        for w in pool:
            w.stop()
