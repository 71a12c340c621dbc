"""CPU cost of a fresh game process per game and seat, split by where it is paid.

For ``n`` games of one bot file (default ``bots/heuristic.py``) this forks a
game process from the bot's template, lets it take its layers, loads the bot
in it (the ``game`` message) and kills it, reading the CPU clocks of the
template and of the game process between the steps:

* template fork: the template's CPU for one ``fork`` request (receive, fork, answer);
* child hardening: the game process's CPU from its fork until it waits for its game
  (closing descriptors, uid, rlimits, no_new_privs, seccomp, copy-on-write faults);
* child bot load: the game process's CPU for the ``game`` message (the bot's module
  code, ``Bot()``, ``start_game``, the answer);
* referee side: the referee's CPU for the spawn, the ``game`` call and the kill;
* exit (mean, derived): the CPU of the template's reaped children in all (read from
  ``os.times()`` once the template is gone) beyond what their clocks showed while
  they lived: a killed game process's teardown.

Each step also gives its minor page faults (from ``/proc/PID/stat``): most of a
game process's start is copy-on-write copies of the template's pages, a count
that, unlike CPU time, a loaded machine does not blur.

    python benchmarks/forkcost.py [--games 200] [--bot bots/heuristic.py] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from arena.sandbox import Limits
from arena.sandbox.limits import cpu_clock, cpu_seconds
from arena.sandbox.python.factory import _default_rules
from arena.sandbox.python.process import Template
from arena.trust.botsource import read_bot_file

ROOT = Path(__file__).resolve().parent.parent


def _state(pid: int) -> str:
    """The scheduler state letter of ``pid`` (R running, S sleeping, T stopped...)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return "?"


def _minflt(pid: int) -> int:
    """The minor page faults of ``pid`` so far (copy-on-write copies among them)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[7])
    except (OSError, IndexError, ValueError):
        return 0


def _settle(pid: int, clock: int, limit: float = 2.0) -> float:
    """Wait until ``pid`` sleeps (blocked on its pipe) with a steady CPU clock; its CPU seconds."""
    end = time.monotonic() + limit
    last = -1.0
    while time.monotonic() < end:
        now = cpu_seconds(clock)
        if _state(pid) == "S" and now == last:
            return now
        last = now
        time.sleep(0.002)
    return cpu_seconds(clock)


def _children() -> float:
    t = os.times()
    return t.children_user + t.children_system


def measure(bot: str, games: int) -> dict[str, Any]:
    """The split, in ms per game process (median over ``games``, and the mean of the whole)."""
    src = read_bot_file(bot)
    limits = Limits()
    rules = _default_rules()
    before = _children()
    template = Template(src, limits)
    tclock = cpu_clock(template.proc.pid)
    _settle(template.proc.pid, tclock)
    start_cpu = cpu_seconds(tclock)
    parts: dict[str, list[float]] = {k: [] for k in ("template_fork", "child_hardening", "child_load", "referee")}
    faults: dict[str, list[int]] = {k: [] for k in ("template_fork", "child_hardening", "child_load")}
    child_total = 0.0
    for g in range(games + 1):  # the first one warms up
        t0 = cpu_seconds(tclock)
        f0 = _minflt(template.proc.pid)
        r0 = time.process_time()
        worker = template.spawn()
        r1 = time.process_time()
        t1 = _settle(template.proc.pid, tclock)
        c1 = _settle(worker.pid, worker.clock)
        f1, g1 = _minflt(template.proc.pid), _minflt(worker.pid)
        r2 = time.process_time()
        reply, _ = worker.call(("game", g, 0, ["a", "b", "c", "d"], rules, f"g{g}"), 5.0, 5.0, "load")
        r3 = time.process_time()
        c2 = _settle(worker.pid, worker.clock)
        g2 = _minflt(worker.pid)
        assert type(reply) is list and reply[3] is None, reply
        r4 = time.process_time()
        worker.kill()
        r5 = time.process_time()
        if g:
            parts["template_fork"].append(t1 - t0)
            parts["child_hardening"].append(c1)
            parts["child_load"].append(c2 - c1)
            parts["referee"].append((r1 - r0) + (r3 - r2) + (r5 - r4))
            faults["template_fork"].append(f1 - f0)
            faults["child_hardening"].append(g1)
            faults["child_load"].append(g2 - g1)
        child_total += c2
    template.spawn().kill()  # the template reaps the last ones on this fork
    time.sleep(0.05)
    template_end = cpu_seconds(tclock)
    status = _status(template.proc.pid)
    template.kill()
    whole = _children() - before  # the template and all its reaped game processes
    per: dict[str, Any] = {k: round(statistics.median(v) * 1000, 3) for k, v in parts.items()}
    per["total_median"] = round(sum(per[k] for k in parts), 3)
    # the game processes' CPU beyond what their clocks showed while alive: their exit (teardown)
    per["child_exit_mean"] = round((whole - template_end - child_total) / (games + 2) * 1000, 3)
    per.update({f"{k}_faults": statistics.median(v) for k, v in faults.items()})
    per["template_start_ms"] = round(start_cpu * 1000, 1)
    per.update(status)
    return per


def _status(pid: int) -> dict[str, Any]:
    """The template's memory: resident set and page tables (what a fork copies), KiB."""
    out: dict[str, Any] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmPTE", "VmSize", "RssAnon"):
                    out[f"template_{key}_kib"] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--bot", default=str(ROOT / "bots" / "heuristic.py"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    doc = measure(args.bot, args.games)
    if args.json:
        print(json.dumps(doc))
    else:
        print(", ".join(f"{k} {v}" for k, v in doc.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
