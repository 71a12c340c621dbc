"""What honest bots send the referee: the largest turn of the bundled bots and examples.

Plays sandboxed games of every bot in ``bots/`` and ``examples/`` (given as files, so each runs
in its game process), seats and table sizes rotating, and reports the largest message and the
largest turn (a move or a notification: all its messages) they ever sent, in bytes, messages
and actions, and the referee's CPU spent on a seat's turn (median, 99th percentile, largest),
next to the bounds of :class:`arena.sandbox.Limits` that a worker may not pass
(docs/readme-sandbox.md, "Bot messages are bounded and billed").

    python benchmarks/wire.py [--games 120] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from arena.game.referee import Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits, SandboxFactory
from arena.sandbox.python import process as process_module
from arena.sandbox.python.seat import SandboxedSeat
from arena.trust.botsource import read_bot_file

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "bots").glob("[a-z]*.py")) + sorted((ROOT / "examples").glob("*.py"))

peak: dict[str, float] = {"reply_bytes": 0, "reply_actions": 0}
turns: list[tuple[int, int, int, float]] = []


def instrument() -> None:
    """Wrap the referee's reading and accounting to see every message and turn."""
    recv = process_module.GameProcess.recv
    count = SandboxedSeat._count
    spent = SandboxedSeat._spent

    def seen_recv(self: Any) -> Any:
        before = self.turn_bytes
        message = recv(self)
        peak["reply_bytes"] = max(peak["reply_bytes"], self.turn_bytes - before)
        return message

    def seen_count(self: SandboxedSeat, actions: int) -> None:
        peak["reply_actions"] = max(peak["reply_actions"], actions)
        count(self, actions)

    def seen_spent(self: SandboxedSeat, worker: Any, t0: float | None = None) -> None:
        spent(self, worker, t0)
        if t0 is not None:
            turns.append((worker.turn_bytes, worker.turn_messages, self.acted, self.turn_referee))

    process_module.GameProcess.recv = seen_recv  # type: ignore[method-assign]
    SandboxedSeat._count = seen_count  # type: ignore[method-assign]
    SandboxedSeat._spent = seen_spent  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=120)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    instrument()
    limits = Limits()
    factories = [SandboxFactory(read_bot_file(p), limits) for p in FILES]
    faults = 0
    try:
        for g in range(args.games):
            n = 2 + g % 3
            chosen = [factories[(g + k) % len(factories)] for k in range(n)]
            players = [f(g, s) for s, f in enumerate(chosen)]
            try:
                outcome = Referee(CONTEST).play(players, seed=g)
            finally:
                for p in players:
                    p.close()
            faults += len(outcome.faults)
    finally:
        for f in factories:
            f.close()
    cpu = sorted(t[3] for t in turns)
    result = {
        "games": args.games,
        "turns": len(turns),
        "faults": faults,
        "largest_reply_bytes": peak["reply_bytes"],
        "largest_reply_actions": peak["reply_actions"],
        "largest_turn_bytes": max(t[0] for t in turns),
        "largest_turn_messages": max(t[1] for t in turns),
        "largest_turn_actions": max(t[2] for t in turns),
        "referee_us_per_turn_median": round(statistics.median(cpu) * 1e6, 1),
        "referee_us_per_turn_p99": round(cpu[int(len(cpu) * 0.99)] * 1e6, 1),
        "referee_us_per_turn_max": round(cpu[-1] * 1e6, 1),
        "limits": {
            "max_reply_bytes": limits.max_reply_bytes,
            "max_turn_bytes": limits.max_turn_bytes,
            "max_turn_messages": limits.max_turn_messages,
            "max_turn_actions": limits.max_turn_actions,
            "referee_turn_us": limits.referee_turn_seconds * 1e6,
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:28} {value}")


if __name__ == "__main__":
    main()
