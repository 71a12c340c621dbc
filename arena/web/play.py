"""``arena play human BOT... --web``: the match with the human seat in a browser."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..cli import MatchDisplay, finish_play, limits_from_args, to_stderr
from ..errors import UsageError
from ..rules import Rules


def default_record() -> str:
    """A new record file name in the current folder (never an existing file)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for n in range(1, 1000):
        name = f"arena-web-{stamp}" + (f"-{n}" if n > 1 else "") + ".jsonl"
        if not Path(name).exists():
            return name
    raise UsageError("cannot find a free record file name here; give --replay FILE")


def play_web(args: argparse.Namespace, rules: Rules, games: int) -> int:
    """Serve the seat, play the match (the bots as at the terminal), keep the record."""
    from ..match import run_match
    from .seat import SeatState, web_factory
    from .serve import SeatServer

    humans = args.bots.count("human")
    if humans != 1:
        raise UsageError(f"--web seats one person: put `human` once among the bots ({humans} given)")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 0 to 65535")
    replay = args.replay or default_record()
    shared = SeatState()
    try:
        server = SeatServer(shared, args.host, args.port)
    except OSError as exc:
        raise UsageError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    server.start()
    print(f"arena: your seat is at {server.url}", file=sys.stderr, flush=True)
    print("arena: open it in a browser (Ctrl-C here stops the match)", file=sys.stderr, flush=True)
    try:
        doc = run_match(
            args.bots,
            games=games,
            seed=args.seed,
            rules=rules,
            replay=replay,
            trusted=args.trusted,
            human=web_factory(shared),
            on_game=MatchDisplay(games, verbose=args.verbose, progress=False).game,
            notice=to_stderr,
            force=getattr(args, "force", False),
            limits=limits_from_args(args),
        )
        shared.publish(phase="closed", standings=doc.get("standings", []))
        shared.wait_fetched(timeout=10.0)  # let the page read the last result before the server goes
    finally:
        server.stop()
    if doc["games"]:
        print(f"arena: the record is in {replay}", file=sys.stderr)
    return finish_play(doc, "json" if args.json else args.format)  # 130 for Ctrl-C, 143 for SIGTERM
