"""The Ray backend: the same games as the local backend, played as Ray tasks.

Only this module imports :mod:`ray` (``pip install 'yard-bridge-arena[ray]'``).
Without ``--ray-address`` a local Ray instance with one CPU per worker is
started and shut down afterwards; with it, the run joins that cluster, whose
nodes must have this package installed. Each task plays a small chunk of
games and returns their records; the parent stores a chunk as soon as its
task ends, in the same database as the local backend.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from .local import Batches, HarnessError
from .schedule import GameKey
from .worker import Job, play_chunk


def chunk_size(games: int, workers: int) -> int:
    """Smaller than the local chunks: a task's results are stored only when it ends."""
    return max(1, min(16, games // (workers * 8)))


def run(job: Job, keys: Sequence[GameKey], *, workers: int, address: str | None,
        stop: Callable[[], bool]) -> Batches:
    """Play ``keys`` as Ray tasks, at most ``2 * workers`` at a time; yield each task's games."""
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   "logging_level": logging.ERROR, "configure_logging": True}
        if address:
            options["address"] = address
        else:
            options["num_cpus"] = workers
        ray.init(**options)
    try:
        task = ray.remote(num_cpus=1, max_retries=2)(play_chunk)
        job_ref = ray.put(job)
        size = chunk_size(len(keys), workers)
        todo = [list(keys[i:i + size]) for i in range(0, len(keys), size)]
        todo.reverse()
        in_flight: dict[Any, list[GameKey]] = {}
        limit = 2 * workers if not address else max(2 * workers, 2 * int(ray.cluster_resources().get("CPU", 1)))
        while (todo or in_flight) and not stop():
            while todo and len(in_flight) < limit:
                chunk = todo.pop()
                in_flight[task.remote(job_ref, [tuple(k) for k in chunk])] = chunk  # type: ignore[misc]
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.2)
            for ref in done:
                chunk = in_flight.pop(ref)
                try:
                    records = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise HarnessError(f"Ray task for games {chunk[0]}..{chunk[-1]} failed: "
                                       f"{str(exc).strip().splitlines()[-1]}") from None
                yield records
        for ref in in_flight:
            ray.cancel(ref, force=True)
    finally:
        if started_here:
            ray.shutdown()
