"""Sandbox speed: what users run, sandboxed against in-process (``--trusted``), side by side.

Two scenarios, each played in every mode on the same seeds, in short slices
that alternate between the modes so that other load on the machine hits all
alike (the best slice of each mode is kept):

* ``random``: ``bots/random.py`` against ``bots/greedy.py``, 2 players, seats
  rotating: bots that think for nothing, so this measures the pipe;
* ``heuristic``: four copies of ``bots/heuristic.py`` given as *files*, 4
  players, as ``arena play h1.py h2.py h3.py h4.py`` would run them.

Modes: ``trusted`` (plain compile, in-process: ``--trusted``), ``guarded``
(compiled under the code policy, run in-process: layer 1 alone), ``sandboxed``
(layer 1 in a hardened game process per game and seat, as before issue 19),
``streamed`` (what ``arena play FILE`` runs: the same, one game process per seat's
file for the whole run, a fresh namespace and ``Bot`` per game) and ``unguarded``
(the same worker running the plainly compiled source: the test-only ``escaped_for_tests`` switch; used only to split the
time). Per move it reports wall time, the referee's CPU time and the bot
processes' CPU time (each game process's CPU clock, read by the referee), and
the split of a sandboxed move, from two extra timed slices (not counted in
the rates: timing costs a clock read or two per move):

* bot code: the bots' ``move`` calls, CPU, timed in-process (``trusted``,
  and ``guarded``: the same code under the guards); guards = the difference;
* in the game process (timed inside it, through the test-only ``raw``
  message): the bot's ``move`` call, the worker's own Python around it
  (reading the view, building the ``Turn``, the reply), and the rest of its
  CPU: waking up, reading and decoding, encoding and writing, that is the
  process switches, whose cold caches make them cost far more than a bare
  pipe round trip (timed here too, between two tiny processes);
* the referee's extra: sandboxed referee CPU minus the same games' engine
  work in-process (guarded referee CPU minus the guarded bot code);
* waiting: sandboxed wall minus the referee's and the bot processes' CPU
  (the CPU went to other processes, or to none).

Last, the per-game process cost of a sandboxed seat (``benchmarks/forkcost.py``):
the CPU of forking a game process from the bot's template, its hardening, the
bot's load in it and the referee's side, median per seat, with the page faults.

    python benchmarks/sandbox.py [--quick] [--games 20] [--rounds 3] [--json]
    python benchmarks/sandbox.py --programs [--quick]   # node, C++ and stdio bots: benchmarks/programs.py
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.game.referee import GameInfo, Referee
from arena.game.seeds import derive_seed
from arena.sandbox import Limits, SandboxFactory
from arena.sandbox.policy import compiler as policy
from arena.sandbox.python.process import Template
from arena.sandbox.python.seat import SandboxedSeat
from arena.seats.loader import InProcessPlayer, load_trusted
from arena.trust.botsource import BotSource, read_bot_file

try:
    from forkcost import measure as process_cost  # run as a script: benchmarks/ is on the path
except ImportError:  # pragma: no cover - imported from elsewhere
    from benchmarks.forkcost import measure as process_cost

ROOT = Path(__file__).resolve().parent.parent
MODES = ("trusted", "guarded", "sandboxed", "streamed", "unguarded")


class GuardedFactory:
    """Bots compiled under the code policy, run in the referee's process (layer 1 alone)."""

    def __init__(self, src: BotSource) -> None:
        self.src = src
        self.code = policy.compile_bot(src)

    def __call__(self, bot_key: Any, seat: int) -> InProcessPlayer:
        bot = policy.instantiate(self.code, self.src, derive_seed(bot_key, "bot", seat))
        return InProcessPlayer(bot, self.src.name)


#: Sent to each game process of the timed slice (the test-only ``raw`` message, unrestricted code
#: in the hardened worker): from now on it times the bot's ``move`` calls, the worker's
#: ``on_move`` around them, and its round trips to the referee within a move.
_PATCH = """
import time
import arena.sandbox.python.botloop as W
pt = time.thread_time
T = {"start": pt(), "move": 0.0, "on_move": 0.0, "request": 0.0, "moves": 0}
W._bench = T


class _Timed:
    def __init__(self, bot):
        self.bot = bot

    def move(self, turn):
        t = pt()
        try:
            self.bot.move(turn)
        finally:
            T["move"] += pt() - t


_on_move, _request = W.GameLoop.on_move, W.GameLoop.request


def on_move(self, fields):
    if type(self.bot) is not _Timed:
        self.bot = _Timed(self.bot)
    t = pt()
    try:
        return _on_move(self, fields)
    finally:
        T["on_move"] += pt() - t
        T["moves"] += 1


def request(self, message):
    t = pt()
    try:
        return _request(self, message)
    finally:
        T["request"] += pt() - t


W.GameLoop.on_move, W.GameLoop.request = on_move, request
result = True
"""
_FETCH = """
import time
import arena.sandbox.python.botloop as W
T = W._bench
result = (T["move"], T["on_move"], T["request"], time.thread_time() - T["start"], T["moves"])
"""


class TimedPlayer(SandboxedSeat):
    """A sandboxed seat whose game process times its own inside (see ``_PATCH``)."""

    factory: TimedFactory

    def start_game(self, info: GameInfo) -> None:
        super().start_game(info)
        assert self.worker is not None
        self.worker.call(("raw", _PATCH), 5.0, 5.0, "raw")

    def close(self) -> None:
        worker = self.worker
        if worker is not None and not worker.dead:
            reply, _ = worker.call(("raw", _FETCH), 5.0, 5.0, "raw")
            for i, v in enumerate(ast.literal_eval(reply[1])):
                self.factory.inside[i] += v
        super().close()


class TimedFactory(SandboxFactory):
    """Sandboxed as ``arena play FILE``, with templates that take the ``raw`` message: for timing."""

    def __init__(self, src: BotSource) -> None:
        #: CPU seconds in its game processes: bot ``move``, ``on_move``, round trips in moves, all; moves.
        self.inside = [0.0, 0.0, 0.0, 0.0, 0.0]
        super().__init__(src, Limits())

    def _template(self) -> Template:
        with self.lock:
            template = self.template
            if template is None or template.dead or template.owner != os.getpid():
                template = self.template = Template(self.src, self.limits, raw_ok=True)
            return template

    def __call__(self, game_seed: Any, seat: int) -> TimedPlayer:
        return TimedPlayer(self, game_seed, seat)


def timed_in_process(factories: list[Any], games: int, start: int, rotate: bool) -> tuple[float, float]:
    """CPU seconds per move in-process: the bots' ``move`` calls, and all the referee's process used."""
    acc = [0.0, 0]
    referee = Referee()
    clock = time.process_time
    c0 = clock()

    def timed(inner: Any) -> Any:
        def move(turn: Any) -> None:
            t = clock()
            try:
                inner(turn)
            finally:
                acc[0] += clock() - t
                acc[1] += 1

        return move

    for g in range(start, start + games):
        order = factories if not rotate or g % 2 else factories[::-1]
        players = [f(g, s) for s, f in enumerate(order)]
        for p in players:
            p.move = timed(p.move)
        referee.play(players, seed=g)
    n = max(acc[1], 1)
    return acc[0] / n, (clock() - c0) / n


def timed_sandboxed(files: list[BotSource], games: int, start: int, rotate: bool) -> dict[str, float]:
    """Per move, CPU seconds inside the game processes: the bot's code, the worker's Python
    around it, and the rest (waking, reading, decoding, encoding, writing: the process switches)."""
    factories = [TimedFactory(s) for s in files]
    try:
        play_slice(factories, games, start, rotate, Tally())
    finally:
        for f in factories:
            f.close()
    move, on_move, request, total, n = (sum(f.inside[i] for f in factories) for i in range(5))
    n = max(n, 1)
    return {
        "bot_code": (move - request) / n,
        "worker_python": (on_move - move) / n,
        "switches_and_io": (total - on_move + request) / n,
    }


@dataclass
class Tally:
    """What one mode of one scenario cost over its slices."""

    games: int = 0
    moves: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    worker_cpu: float = 0.0
    worker_moves: int = 0
    best_rate: float = 0.0
    rates: list[float] = field(default_factory=list)
    #: CPU of the bot processes over the run (forks, loading, moves; templates' start-up taken off),
    #: warm-up game included.
    process_cpu: float | None = None


def make_factories(mode: str, files: list[BotSource]) -> list[Any]:
    """One factory per seat's file (the same file given twice gets two factories, as in ``play``)."""
    if mode == "trusted":
        return [load_trusted(s) for s in files]
    if mode == "guarded":
        return [GuardedFactory(s) for s in files]
    if mode == "streamed":
        return [StreamedFactory(SandboxFactory(s, Limits())) for s in files]
    return [SandboxFactory(s, Limits(), escaped_for_tests=mode == "unguarded") for s in files]


class StreamedFactory:
    """What ``arena play FILE`` runs since issue 19: one stream (one game process) per seat's file."""

    def __init__(self, factory: SandboxFactory) -> None:
        self.factory = factory
        self.stream = factory.stream()
        self.move_cpu = factory.move_cpu
        #: CPU seconds of the stream's process, read before it is killed: it is the template's
        #: child, never reaped by this process, so ``children_cpu`` cannot see it.
        self.unreaped = 0.0

    def __call__(self, game_seed: Any, seat: int) -> Any:
        return self.stream(game_seed, seat, deal=game_seed)

    def close(self) -> None:
        worker = self.stream.worker
        if worker is not None and not worker.dead:
            self.unreaped += worker.cpu()
        self.stream.close()
        self.factory.close()


def worker_cpu(factories: list[Any], clear: bool = False) -> tuple[float, int]:
    """(CPU seconds, moves) of the bot processes' moves since the last clearing, as read by the referee."""
    cpu, n = 0.0, 0
    for f in factories:
        moves = getattr(f, "move_cpu", None)
        if moves is not None:
            cpu += sum(moves)
            n += len(moves)
            if clear:
                moves.clear()
    return cpu, n


def children_cpu() -> float:
    """CPU seconds of the reaped child processes (templates, and through them their game processes)."""
    t = os.times()
    return t.children_user + t.children_system


def template_cpu(src: BotSource, unguarded: bool) -> float:
    """CPU seconds of starting (and trying) one template and stopping it, no game played."""
    before = children_cpu()
    SandboxFactory(src, Limits(), escaped_for_tests=unguarded).close()
    return children_cpu() - before


def play_slice(factories: list[Any], games: int, start: int, rotate: bool, tally: Tally) -> None:
    """Play ``games`` games from seed ``start``; add their cost to ``tally``."""
    referee = Referee()
    worker_cpu(factories, clear=True)
    w0, c0 = time.perf_counter(), time.process_time()
    moves = 0
    for g in range(start, start + games):
        order = factories if not rotate or g % 2 else factories[::-1]
        players = [f(g, s) for s, f in enumerate(order)]
        try:
            outcome = referee.play(players, seed=g)
        finally:
            for p in players:
                p.close()
        assert not outcome.faults, outcome.faults
        moves += outcome.moves
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    cpu1, moves1 = worker_cpu(factories)
    cpu0 = moves0 = 0
    tally.games += games
    tally.moves += moves
    tally.wall += wall
    tally.cpu += cpu
    tally.worker_cpu += cpu1 - cpu0
    tally.worker_moves += moves1 - moves0
    tally.rates.append(games / wall)
    tally.best_rate = max(tally.best_rate, games / wall)


def pipe_round_trip(n: int = 2000) -> float:
    """Seconds per round trip of one byte between two processes over pipes (two switches)."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the echoing child
        try:
            for _ in range(n + 1):
                os.write(b_w, os.read(a_r, 1))
        finally:
            os._exit(0)
    try:
        os.write(a_w, b"x")
        os.read(b_r, 1)  # warm
        t0 = time.perf_counter()
        for _ in range(n):
            os.write(a_w, b"x")
            os.read(b_r, 1)
        return (time.perf_counter() - t0) / n
    finally:
        os.waitpid(pid, 0)
        for fd in (a_r, a_w, b_r, b_w):
            os.close(fd)


def scenario_files(name: str, folder: Path) -> tuple[list[BotSource], bool]:
    """The bot files of a scenario (copied into ``folder``) and whether seats rotate."""
    if name == "random":
        picks = ["random", "greedy"]
    else:
        picks = ["heuristic"] * 4
    files = []
    for i, pick in enumerate(picks):
        path = folder / f"{pick}{i + 1}.py"
        shutil.copyfile(ROOT / "bots" / f"{pick}.py", path)
        files.append(read_bot_file(str(path)))
    return files, name == "random"


def run(games: dict[str, int], rounds: int, modes: tuple[str, ...], process_games: int = 100) -> dict[str, Any]:
    """Every scenario in every mode, slices interleaved; the numbers as a document."""
    doc: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()], "scenarios": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, per_slice in games.items():
            files, rotate = scenario_files(name, Path(tmp))
            forked = ("sandboxed", "streamed", "unguarded")
            startup = {m: template_cpu(files[0], m == "unguarded") for m in modes if m in forked}
            factories = {m: make_factories(m, files) for m in modes}
            tallies = {m: Tally() for m in modes}
            try:
                seed = 1
                for m in modes:  # warm up: templates started, caches filled
                    play_slice(factories[m], 1, 0, rotate, Tally())
                for _ in range(rounds):
                    for m in modes:
                        play_slice(factories[m], per_slice, seed, rotate, tallies[m])
                    seed += per_slice  # every mode plays the same games
                timing: dict[str, float] = {}
                for m in ("trusted", "guarded"):
                    if m in modes:
                        bot, whole = timed_in_process(factories[m], per_slice, 1, rotate)
                        timing[f"{m}_bot_code"], timing[f"{m}_engine"] = bot, whole - bot
                if "sandboxed" in modes:
                    inside = timed_sandboxed(files, per_slice, 1, rotate)
                    timing.update({f"worker_{k}": v for k, v in inside.items()})
            finally:
                for m, fs in factories.items():
                    before = children_cpu()
                    for f in fs:
                        close = getattr(f, "close", None)
                        if close is not None:
                            close()
                    unreaped = sum(getattr(f, "unreaped", 0.0) for f in fs)
                    if m in startup:  # without the templates' start-up, paid once per bot and run
                        tallies[m].process_cpu = max(0.0, children_cpu() - before - len(fs) * startup[m]) + unreaped
            doc["scenarios"][name] = summarize(tallies, timing)
    doc["pipe_round_trip_us"] = round(pipe_round_trip() * 1e6, 1)
    for s in doc["scenarios"].values():
        split = s.get("split_us_per_move")
        if split is not None:
            split["bare_round_trip"] = doc["pipe_round_trip_us"]
    doc["process_cost_ms_per_seat"] = process_cost(str(ROOT / "bots" / "heuristic.py"), process_games)
    doc["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return doc


def summarize(t: dict[str, Tally], timing: dict[str, float] | None = None) -> dict[str, Any]:
    """Rates, ratios and the per-move split of one scenario (``timing``: CPU seconds per move
    from the timed slices, see :func:`timed_in_process` and :func:`timed_sandboxed`)."""

    def per_move(x: float, n: int) -> float:
        return round(x / n * 1e6, 1) if n else 0.0

    out: dict[str, Any] = {
        m: {
            "games_per_s": round(v.best_rate, 1),
            "games": v.games,
            "wall_us_per_move": per_move(v.wall, v.moves),
            "referee_cpu_us_per_move": per_move(v.cpu, v.moves),
            "worker_cpu_us_per_move": per_move(v.worker_cpu, v.moves) if v.worker_moves else None,
            # CPU per game, every process: the referee's, plus the bot processes' whole lives
            "cpu_ms_per_game": round(
                (v.cpu + (v.process_cpu or 0.0)) / v.games * 1000
                if v.process_cpu is None
                else (v.cpu / v.games + v.process_cpu / (v.games + 1)) * 1000,
                2,
            ),
        }
        for m, v in t.items()
    }
    if "trusted" in t:
        base = t["trusted"].best_rate
        out["ratio_to_trusted"] = {m: round(v.best_rate / base, 3) for m, v in t.items() if m != "trusted"}
        cpu_base = out["trusted"]["cpu_ms_per_game"]
        out["cpu_ratio_to_trusted"] = {
            m: round(cpu_base / out[m]["cpu_ms_per_game"], 3) for m in t if m != "trusted" and out[m]["cpu_ms_per_game"]
        }
    if {"trusted", "guarded", "sandboxed", "unguarded"} <= set(t) and timing:
        tr, gu, sb, ug = (out[m] for m in ("trusted", "guarded", "sandboxed", "unguarded"))
        us = {k: round(v * 1e6, 1) for k, v in timing.items()}
        engine = us["guarded_engine"]  # the referee's own work in-process, the bots' calls taken off
        sb_ref, sb_worker = sb["referee_cpu_us_per_move"], sb["worker_cpu_us_per_move"] or 0.0
        out["split_us_per_move"] = {
            "trusted_move_cpu": tr["referee_cpu_us_per_move"],
            "bot_code_trusted": us["trusted_bot_code"],
            "bot_code_guarded": us["guarded_bot_code"],
            "guards_in_process_cpu": round(gu["referee_cpu_us_per_move"] - tr["referee_cpu_us_per_move"], 1),
            "guards_in_worker_cpu": round(sb_worker - (ug["worker_cpu_us_per_move"] or 0), 1),
            "sandboxed_wall": sb["wall_us_per_move"],
            "sandboxed_referee_cpu": sb_ref,
            "referee_engine_cpu": engine,
            "referee_extra_cpu": round(sb_ref - engine, 1),
            "sandboxed_worker_cpu": sb_worker,
            "worker_bot_code": us["worker_bot_code"],
            "worker_python": us["worker_worker_python"],
            "worker_switches_and_io": us["worker_switches_and_io"],
            "waiting": round(sb["wall_us_per_move"] - sb_ref - sb_worker, 1),
        }
    return out


#: How the split is printed: one line per process, then the wall clock.
SPLIT_LINES = (
    ("in-process", ("trusted_move_cpu", "bot_code_trusted", "bot_code_guarded", "guards_in_process_cpu")),
    ("referee", ("sandboxed_referee_cpu", "referee_engine_cpu", "referee_extra_cpu")),
    (
        "bot process",
        ("sandboxed_worker_cpu", "worker_bot_code", "worker_python", "worker_switches_and_io", "guards_in_worker_cpu"),
    ),
    ("wall", ("sandboxed_wall", "waiting", "bare_round_trip")),
)


def report(doc: dict[str, Any]) -> None:
    """The document as tables."""
    for name, s in doc["scenarios"].items():
        title = "random vs greedy, 2 players" if name == "random" else "4 x heuristic.py as files, 4 players"
        rows = []
        for m in MODES:
            if m not in s:
                continue
            r = s[m]
            ratio = 1.0 if m == "trusted" else s.get("ratio_to_trusted", {}).get(m)
            rows.append(
                [
                    m,
                    r["games_per_s"],
                    ratio,
                    r["wall_us_per_move"],
                    r["referee_cpu_us_per_move"],
                    r["worker_cpu_us_per_move"],
                    r["cpu_ms_per_game"],
                    1.0 if m == "trusted" else s.get("cpu_ratio_to_trusted", {}).get(m),
                ]
            )
        print(
            tabulate(
                rows,
                headers=[
                    title,
                    "games/s",
                    "ratio",
                    "wall µs/move",
                    "referee CPU µs/move",
                    "bot CPU µs/move",
                    "all CPU ms/game",
                    "CPU ratio",
                ],
            )
        )
        split = s.get("split_us_per_move")
        if split:
            print("split of a sandboxed move (µs; CPU unless named wall):")
            for label, names in SPLIT_LINES:
                print(f"  {label}: " + ", ".join(f"{k} {split[k]}" for k in names if k in split))
        print()
    cost = doc.get("process_cost_ms_per_seat")
    if cost:
        print(
            "per-game process cost, CPU ms per seat (heuristic.py, median): "
            f"template fork {cost['template_fork']}, child hardening {cost['child_hardening']}, "
            f"child bot load {cost['child_load']}, referee {cost['referee']}: total {cost['total_median']} "
            f"(+ exit and reaping, mean {cost['child_exit_mean']}); page faults: template "
            f"{cost['template_fork_faults']:g}, child hardening {cost['child_hardening_faults']:g}, "
            f"load {cost['child_load_faults']:g}"
        )
    print(
        f"load average before {doc['load_average']}, after {doc['load_average_after']}; "
        f"bare pipe round trip {doc['pipe_round_trip_us']} µs"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (about a minute)")
    parser.add_argument("--games", type=int, default=None, help="games per slice of the heuristic scenario")
    parser.add_argument("--rounds", type=int, default=None, help="slices per mode, alternating")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--modes", default=",".join(MODES), help="modes to run, comma-separated (default: all)")
    parser.add_argument(
        "--programs",
        action="store_true",
        help="bot programs instead: benchmarks/programs.py",
    )
    args = parser.parse_args(argv)
    if args.programs:
        import programs  # noqa: PLC0415 - beside this file

        doc = programs.run(10 if args.quick else 40, 5 if args.quick else 10)
        print(json.dumps(doc)) if args.json else programs.report(doc)
        return 0
    heur = args.games or (4 if args.quick else 15)
    rounds = args.rounds or (2 if args.quick else 3)
    games = {"random": heur * 4, "heuristic": heur}
    doc = run(games, rounds, tuple(m for m in MODES if m in args.modes.split(",")), 40 if args.quick else 150)
    if args.json:
        print(json.dumps(doc))
    else:
        report(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
