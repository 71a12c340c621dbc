"""Guard cost on real bots: guarded (code policy, in-process) against trusted, and a per-guard table.

For each bot file (``bots/heuristic.py``, ``bots/greedy.py``, ``examples/*.py``
by default), four copies play four-player games in the referee's process,
once compiled plainly (``trusted``) and once under the code policy
(``guarded``), in alternating slices on the same seeds (so that other load on
the machine hits both alike). It reports, per mode, the CPU time of a whole
game and of the bots' moves alone, and the guarded/trusted ratios (game rate,
as ``benchmarks/sandbox.py`` reports it, and bot time).

A third mode, ``calls``, is the same policy compiled without the inlining
pass (``GuardCalls``: every run-time check a guard call, as before it).

``--profile`` adds the per-guard table: every guard and guarded builtin the
compiled bot can call is wrapped with a counter for one profiling run (calls
per move), and each guard's own cost is timed on a sample of the arguments it
really got (ns per call including the call, the bare loop taken off): calls x
cost = the guard's share of a move. With ``--calls`` the table is for the
guard calls of the ``calls`` mode; without, for what the inlined code still calls.

    python benchmarks/guards.py [--games 10] [--rounds 3] [--profile [--calls]] [bot.py ...]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.game.referee import Referee
from arena.game.seeds import derive_seed
from arena.sandbox.policy import compiler as policy
from arena.sandbox.policy.namespace import BotNamespace
from arena.sandbox.policy.transform import BotPolicy, GuardCalls
from arena.seats.loader import InProcessPlayer, load_trusted
from arena.trust.botsource import BotSource, read_bot_file

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BOTS = [ROOT / "bots" / "heuristic.py", ROOT / "bots" / "greedy.py", *sorted((ROOT / "examples").glob("*.py"))]
#: Names in a bot's globals and builtins that are guards (what the profile wraps).
GUARDED_BUILTINS = ("getattr", "hasattr", "setattr", "delattr", "reversed")
#: Guard names not worth timing (called once per class or per print).
NOT_GUARDS = frozenset({"__metaclass__", "_print_"})
SAMPLE = 3000


class TimedPlayer(InProcessPlayer):
    """An in-process player whose moves' CPU time is added up (the bot's own time)."""

    def __init__(self, bot: Any, name: str, clock: list[float]) -> None:
        super().__init__(bot, name)
        inner = self.move
        cpu = time.process_time

        def move(turn: Any) -> None:
            t0 = cpu()
            try:
                inner(turn)
            finally:
                clock[0] += cpu() - t0
                clock[1] += 1

        self.move = move


class Guarded:
    """Bots compiled under the code policy, run in this process; optionally with counted guards."""

    def __init__(
        self, src: BotSource, clock: list[float], counts: Counter[str] | None = None, calls: bool = False
    ) -> None:
        self.src, self.clock, self.counts = src, clock, counts
        self.code = policy.compile_bot(src, GuardCalls if calls else BotPolicy)
        self.samples: dict[str, list[tuple[Any, ...]]] = {}
        self.guards: dict[str, Callable[..., Any]] = {}

    def __call__(self, key: Any, seat: int) -> TimedPlayer:
        space = BotNamespace(derive_seed(key, "bot", seat))
        ns = space.globals()
        if self.counts is not None:
            for name, fn in list(ns.items()):
                if name.startswith("_") and name.endswith("_") and callable(fn) and name not in NOT_GUARDS:
                    ns[name] = self._counted(name, fn)
            env = dict(space.builtins)
            for name in GUARDED_BUILTINS:
                env[name] = self._counted(name, env[name])
            ns["__builtins__"] = env
        exec(self.code, ns)
        return TimedPlayer(ns["Bot"](), self.src.name, self.clock)

    def _counted(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        counts = self.counts
        assert counts is not None
        samples = self.samples.setdefault(name, [])
        self.guards.setdefault(name, fn)

        def counted(*args: Any, **kw: Any) -> Any:
            counts[name] += 1
            if len(samples) < SAMPLE and not kw:
                samples.append(args)
            return fn(*args, **kw)

        return counted


class Trusted:
    """The same file compiled plainly (``--trusted``), moves timed."""

    def __init__(self, src: BotSource, clock: list[float]) -> None:
        self.factory, self.clock = load_trusted(src), clock

    def __call__(self, key: Any, seat: int) -> TimedPlayer:
        player = self.factory(key, seat)
        return TimedPlayer(player.bot, player.name, self.clock)


def play(factory: Any, players: int, games: int, start: int) -> tuple[float, int]:
    """CPU seconds and moves of ``games`` games from seed ``start``."""
    referee = Referee()
    c0, moves = time.process_time(), 0
    for g in range(start, start + games):
        outcome = referee.play([factory(g, s) for s in range(players)], seed=g)
        assert not outcome.faults, outcome.faults
        moves += outcome.moves
    return time.process_time() - c0, moves


def compare(path: Path, players: int, games: int, rounds: int) -> dict[str, Any]:
    """Trusted against guarded (and guard calls: the checks not inlined), slices alternating;
    the best slice of each kept."""
    src = read_bot_file(str(path))
    clocks: dict[str, list[Any]] = {"trusted": [0.0, 0], "guarded": [0.0, 0], "calls": [0.0, 0]}
    factories = {
        "trusted": Trusted(src, clocks["trusted"]),
        "guarded": Guarded(src, clocks["guarded"]),
        "calls": Guarded(src, clocks["calls"], calls=True),
    }
    best: dict[str, tuple[float, float, int]] = {}
    for f in factories.values():
        play(f, players, 1, 0)  # warm up
    for _ in range(rounds):  # every slice the same games: slices compare, the best of each mode is kept
        for m, f in factories.items():
            clocks[m][0] = clocks[m][1] = 0
            cpu, moves = play(f, players, games, 1)
            bot = clocks[m][0]
            if m not in best or cpu < best[m][0]:
                best[m] = (cpu, bot, moves)
    tr, gu, ca = best["trusted"], best["guarded"], best["calls"]
    return {
        "calls_bot_us_per_move": ca[1] / ca[2] * 1e6,
        "calls_bot_ratio": tr[1] / ca[1] if ca[1] else 0.0,
        "bot": path.name,
        "trusted_us_per_move": tr[0] / tr[2] * 1e6,
        "guarded_us_per_move": gu[0] / gu[2] * 1e6,
        "trusted_bot_us_per_move": tr[1] / tr[2] * 1e6,
        "guarded_bot_us_per_move": gu[1] / gu[2] * 1e6,
        "game_ratio": tr[0] / gu[0],
        "bot_ratio": tr[1] / gu[1] if gu[1] else 0.0,
    }


def guard_cost(fn: Callable[..., Any], samples: list[tuple[Any, ...]], repeat: int = 5) -> float:
    """ns per call of ``fn`` on its recorded arguments, the bare loop's time taken off."""
    if not samples:
        return 0.0

    def loop(f: Callable[..., Any] | None) -> float:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            for args in samples:
                try:
                    if f is not None:
                        f(*args)
                except Exception:  # noqa: BLE001, S110 - a guard that refused: timed all the same
                    pass
            best = min(best, time.perf_counter() - t0)
        return best

    return max(0.0, (loop(fn) - loop(None)) / len(samples) * 1e9)


def profile(path: Path, players: int, games: int, calls: bool = False) -> list[list[Any]]:
    """Rows of (guard, calls per move, ns per call, µs per move) for one bot (``calls``: compiled
    with the guards as calls, as before the inlining pass)."""
    src = read_bot_file(str(path))
    counts: Counter[str] = Counter()
    factory = Guarded(src, [0.0, 0], counts, calls=calls)
    _, moves = play(factory, players, games, 1)
    rows: list[list[Any]] = []
    for name, n in counts.most_common():
        if name == "_type_":  # not a guard: counts the inlined checks that ran (two per read off the fast road)
            rows.append(["inlined checks (type() calls)", round(n / moves, 1), "", ""])
            continue
        ns = guard_cost(factory.guards[name], factory.samples[name])
        rows.append([name, round(n / moves, 1), round(ns), round(n / moves * ns / 1000, 2)])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("bots", nargs="*", type=Path, help="bot files (default: the bundled bots and examples)")
    parser.add_argument("--games", type=int, default=10, help="games per slice")
    parser.add_argument("--rounds", type=int, default=3, help="slices per mode, alternating")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--profile", action="store_true", help="also count and time each guard")
    parser.add_argument("--calls", action="store_true", help="profile the guard calls (no inlining)")
    args = parser.parse_args(argv)
    bots = args.bots or DEFAULT_BOTS
    rows = []
    for path in bots:
        r = compare(path, args.players, args.games, args.rounds)
        rows.append(
            [
                r["bot"],
                round(r["trusted_us_per_move"], 1),
                round(r["guarded_us_per_move"], 1),
                round(r["game_ratio"], 3),
                round(r["trusted_bot_us_per_move"], 1),
                round(r["guarded_bot_us_per_move"], 1),
                round(r["bot_ratio"], 3),
                round(r["calls_bot_us_per_move"], 1),
                round(r["calls_bot_ratio"], 3),
            ]
        )
    print(
        tabulate(
            rows,
            headers=[
                "bot (4 copies)",
                "trusted µs/move",
                "guarded µs/move",
                "ratio",
                "bot µs",
                "bot µs guarded",
                "bot ratio",
                "bot µs, calls",
                "bot ratio, calls",
            ],
        )
    )
    if args.profile:
        for path in bots:
            kind = "guard calls (not inlined)" if args.calls else "guards still called"
            print(f"\n{path.name}: {kind} per move")
            rows = profile(path, args.players, args.games, args.calls)
            print(tabulate(rows, headers=["guard", "calls/move", "ns/call", "µs/move"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
