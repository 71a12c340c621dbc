"""The ladder on Ray (``arena serve --backend ray``): the blocks the matchmaker chooses are played
as Ray tasks, as ``arena tournament --backend ray`` plays its chunks (the same start of Ray:
:func:`arena.tournament.backends.ray_tasks.start`), at most ``workers`` at a time; the worker stores
each block's games as soon as its task ends, in the transactions of the local ladder.

Each Ray worker process keeps one :class:`.matchmaker.BlockPlayer` (the versions' sandboxed
factories and streams) from one task to the next, as a tournament's Ray worker keeps its runner.
A task whose Ray worker died is retried by Ray (a block is stored whole or not at all: its keys
are unique, so a block stored once is never counted twice).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from ..store import events
from .matchmaker import Block, BlockPlayer, LadderGame, LadderPlayer

_RUNNER: list[BlockPlayer] = []


def play_block(block: Block) -> list[LadderGame]:
    """A Ray task: the block's games, played by this process's kept :class:`BlockPlayer`."""
    from ...sandbox.programs.buildcache import forbid_builds

    if not _RUNNER:
        _RUNNER.append(BlockPlayer())
    with forbid_builds("a contest's builds run in its build queue"):  # the block carries its built files
        return list(_RUNNER[0].play(block))


def run(
    ladder: LadderPlayer,
    rng: random.Random,
    workers: int,
    alive: Callable[[], bool],
    idle: float,
    address: str | None = None,
) -> None:
    """Keep up to ``workers`` blocks in flight on Ray (the cluster at ``address``, else a local
    instance) until ``alive()`` turns false.

    :raises arena.tournament.backends.local.HarnessError: Ray could not start.
    """
    import ray

    from ...tournament.backends.ray_tasks import start

    ray_api: Any = ray  # Ray's hints are partial (see arena.tournament.backends.ray_tasks)
    started = start(workers, address)
    in_flight: dict[Any, Block] = {}
    try:
        task = ray_api.remote(num_cpus=1, max_retries=2)(play_block)
        while alive():
            while len(in_flight) < workers:
                block = ladder.next_block(rng)
                if block is None:
                    break
                in_flight[task.remote(block)] = block
            if not in_flight:
                time.sleep(idle)
                continue
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
            for ref in done:
                block = in_flight.pop(ref)
                try:
                    games = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the block is lost, the ladder goes on
                    last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
                    events.say(ladder.db, f"ladder: the Ray task of block {block.id} failed: {last[:300]}", "error")
                    continue
                for game in games:
                    ladder.store(game)
        for ref in in_flight:
            ray.cancel(ref, force=True)
    finally:
        if started:
            ray.shutdown()
