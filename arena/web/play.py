"""A match with the human seat in a browser (``arena play human BOT... --web``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from ..playing.match import MatchHooks, MatchResult, MatchSettings, run_match


def default_record() -> str:
    """A new record file name in the current folder (never an existing file)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for n in range(1, 1000):
        name = f"arena-web-{stamp}" + (f"-{n}" if n > 1 else "") + ".jsonl"
        if not Path(name).exists():
            return name
    raise UsageError("cannot find a free record file name here; give --replay FILE")


def play_web(
    settings: MatchSettings,
    hooks: MatchHooks,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_serving: Callable[[str], None] | None = None,
) -> tuple[MatchResult, str]:
    """Serve the seat, play the match (the bots as at the terminal), keep the record (in
    ``settings.record_file``, or a new file here). ``on_serving`` gets the seat's address.
    Returns the result and the record file's name."""
    from .seat import SeatState, web_factory
    from .serve import SeatServer

    humans = settings.bots.count("human")
    if humans != 1:
        raise UsageError(f"--web seats one person: put `human` once among the bots ({humans} given)")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: a port is 0 to 65535")
    settings = replace(settings, record_file=settings.record_file or default_record())
    assert settings.record_file is not None
    shared = SeatState()
    try:
        server = SeatServer(shared, host, port)
    except OSError as exc:
        raise UsageError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    server.start()
    if on_serving is not None:
        on_serving(server.url)
    try:
        result = run_match(settings, replace(hooks, human=web_factory(shared)))
        shared.publish(phase="closed", standings=[r.to_dict() for r in result.standings])
        shared.wait_fetched(timeout=10.0)  # let the page read the last result before the server goes
    finally:
        server.stop()
    return result, settings.record_file
