"""The Ray backend: the same games as the local backend, played as Ray tasks.

Only this module imports :mod:`ray` (``pip install 'yard-bridge-arena[ray]'``).
Without ``--ray-address`` a local Ray instance with one CPU per worker is
started and shut down afterwards; with it, the run joins that cluster, whose
nodes must have this package installed. Each task plays a small chunk of
whole streams and returns their records; the parent stores a chunk as soon as its
task ends, in the same database as the local backend.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..plan.schedule import GameKey, stream_chunks
from .games import Job, play_chunk
from .local import Batches, HarnessError

#: Seconds to wait for a TCP connection to a Ray cluster's address before giving up.
CONNECT_SECONDS = 5.0
#: The port of a Ray head (GCS) and of a Ray Client server when the address names none.
DEFAULT_PORTS = {"": 6379, "ray": 10001}


def parse_address(address: str) -> tuple[str, int] | None:
    """``host:port``, ``ray://host:port``, ``[v6]:port`` or ``host`` -> (host, port);
    None for ``auto`` (Ray finds a cluster on this machine itself).

    :raises HarnessError: not an address.
    """
    text = address.strip()
    if text in ("auto", "local"):
        return None
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    if scheme not in DEFAULT_PORTS:
        raise HarnessError(f"--ray-address {address!r}: expected HOST:PORT, ray://HOST:PORT or auto")
    rest = rest.rstrip("/")
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = rest.rpartition(":") if ":" in rest else (rest, "", "")
    try:
        port = int(port_text) if port_text else DEFAULT_PORTS[scheme]
    except ValueError:
        port = -1
    if not host or not 0 < port < 65536:
        raise HarnessError(f"--ray-address {address!r}: expected HOST:PORT, ray://HOST:PORT or auto")
    return host, port


def probe(address: str, timeout: float = CONNECT_SECONDS) -> None:
    """Fail fast, before any database is made, when nothing answers at a cluster's address
    (``ray.init`` itself retries for minutes).

    :raises HarnessError: not an address, an unknown host, or no connection within ``timeout``.
    """
    import socket

    target = parse_address(address)
    if target is None:
        return
    host, port = target
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror as exc:
        raise HarnessError(
            f"cannot reach the Ray cluster at {address}: unknown host {host!r} ({exc.strerror})"
        ) from None
    except TimeoutError:
        raise HarnessError(f"cannot reach the Ray cluster at {address}: no answer within {timeout:g} s") from None
    except OSError as exc:
        raise HarnessError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def chunk_size(games: int, workers: int) -> int:
    """Smaller than the local chunks: a task's results are stored only when it ends."""
    return max(1, min(16, games // (workers * 8)))


def start(workers: int, address: str | None) -> bool:
    """Join the cluster at ``address``, or start a local Ray instance of ``workers`` CPUs, unless
    this process is in one already; returns whether it started here (then :func:`ray.shutdown` it).

    :raises HarnessError: Ray could not start or join, in one line.
    """
    import ray

    if ray.is_initialized():
        return False
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "configure_logging": True,
    }
    if address:
        options["address"] = address
    else:
        options["num_cpus"] = workers
    try:
        ray.init(**options)
    except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; one line for each
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        where = f"join the Ray cluster at {address}" if address else "start a local Ray instance"
        raise HarnessError(f"cannot {where}: {lines[-1]}") from None
    return True


def run(
    job: Job,
    keys: Sequence[GameKey],
    *,
    workers: int,
    address: str | None,
    stop: Callable[[], bool],
    more: Callable[[], Sequence[GameKey]] | None = None,
) -> Batches:
    """Play ``keys`` as Ray tasks, at most ``2 * workers`` at a time; yield each task's games."""
    import ray

    # Ray's own hints are partial (untyped calls, remote functions typed by the
    # Python function): the backend talks to it through Any.
    ray_api: Any = ray
    started_here = start(workers, address)
    try:
        task = ray_api.remote(num_cpus=1, max_retries=2)(play_chunk)
        job_ref = ray.put(job)
        size = chunk_size(len(keys), workers)
        todo = stream_chunks(keys, size)
        todo.reverse()
        in_flight: dict[Any, list[GameKey]] = {}
        limit = 2 * workers if not address else max(2 * workers, 2 * int(ray_api.cluster_resources().get("CPU", 1)))
        while not stop():
            if not todo and not in_flight:
                nxt = list(more()) if more is not None else []
                if not nxt:
                    break
                size = chunk_size(len(nxt), workers)
                todo = stream_chunks(nxt, size)
                todo.reverse()
            while todo and len(in_flight) < limit:
                chunk = todo.pop()
                in_flight[task.remote(job_ref, [tuple(k) for k in chunk])] = chunk
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.2)
            for ref in done:
                chunk = in_flight.pop(ref)
                try:
                    records = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise HarnessError(
                        f"Ray task for games {chunk[0]}..{chunk[-1]} failed: {str(exc).strip().splitlines()[-1]}"
                    ) from None
                yield records
        for ref in in_flight:
            ray.cancel(ref, force=True)
    finally:
        if started_here:
            ray.shutdown()
