"""Load benchmark of the contest server (issue 21, item 8): page and API latency with many
clients while the ladder plays and uploads arrive, and the ladder's games/s against
``arena tournament`` on the same bots with the same worker count, measured in the same run.

It starts a contest as an organiser does (``arena contest init``, ``invite``, ``arena serve``
as a subprocess on a free loopback port), uploads the reference bots (``bots/*.py``, renamed:
a registered name cannot name a submission) through the API and waits for their checks, then:

1. *quiet*: the ladder plays alone for ``--quiet-seconds``; its games/s from the database's
   finish times;
2. *load*: ``--clients`` concurrent clients (asyncio + httpx, each its own connection) ask for
   the pages (leaderboard, a bot's page, a game in the viewer) and the API (the leaderboard
   JSON, an upload's status), each waiting a random think time (uniform, mean ``--think``
   seconds) between its requests; ``--live`` of them also hold the live leaderboard's
   websocket open, as a browser on ``/`` does; ``--uploads`` new versions arrive meanwhile;
3. *tournament*: the server stopped, ``arena tournament`` plays the same bots' files (the
   uploaded bytes, sandboxed) at every table size the ladder plays, with ``--workers`` equal to
   ``--ladder-workers``.

It prints latency percentiles (p50/p95/p99/max, milliseconds) per endpoint class, and the two
rates. The ratio compares the same work: the ladder's games are of 2 to N players in the
matchmaker's mix, so the tournament's time per game of each size (its elapsed time shared
out over its games by their durations) prices the ladder's mix (``ratio``); the raw games/s
are printed too.

    python benchmarks/server.py [--clients 50] [--seconds 30] [--quiet-seconds 20] [--json]

The machine's load shows in every number: run it more than once and read the ranges.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
BOTS = ("greedy", "heuristic", "random")
PAGES = ("page /", "page /bots/NAME", "page /games/KEY")
APIS = ("api /api/leaderboard", "api /api/submissions/ID")
#: How often each client asks for each class (pages are what people open most).
WEIGHTS = {PAGES[0]: 3, PAGES[1]: 2, PAGES[2]: 2, APIS[0]: 2, APIS[1]: 1}


def arena(*args: str) -> str:
    done = subprocess.run([*ARENA, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"benchmark: arena {' '.join(args[:2])} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bot_bytes(base: str, name: str, version: int = 1) -> bytes:
    text = (ROOT / "bots" / f"{base}.py").read_text()
    text = text.replace(f'name = "{base}"', f'name = "{name}"')
    return (text + f"\n# version {version}\n").encode()


def cpu_seconds(pid: int) -> float:
    """A process's CPU time (user + system) so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(roots: list[int]) -> float:
    """CPU seconds of the processes ``roots`` and all their descendants: each one's own time and its
    reaped children's (so a process that ends inside a window still counts its share of it)."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    children: dict[int, list[int]] = defaultdict(list)
    for pid, fields in stats.items():
        children[int(fields[1])].append(pid)
    total, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += sum(int(x) for x in stats[pid][11:15])
            todo.extend(children[pid])
    return total / os.sysconf("SC_CLK_TCK")


def ladder_pids(server: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == server:
                if b"ladder" in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    s = sorted(values)

    def at(q: float) -> float:
        return round(1000 * s[min(len(s) - 1, int(q * len(s)))], 1)

    return {"n": len(s), "p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": round(1000 * s[-1], 1)}


class Contest:
    """A contest folder and its ``arena serve`` subprocess."""

    def __init__(self, folder: Path, authors: int, ladder_workers: int) -> None:
        self.folder = folder
        arena("contest", "init", str(folder), "--name", "Benchmark Cup")
        self.tokens = [
            arena("contest", "invite", str(folder), f"author{i}").strip().rsplit(": ", 1)[1] for i in range(authors)
        ]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [*ARENA, "serve", str(folder), "--port", str(self.port), "--check-games", "1", "--pace", "0"]
            + ["--ladder-workers", str(ladder_workers), "--uploads-per-minute", "1000"]
            # every client here comes from 127.0.0.1; a contest's come from many addresses
            + ["--live-per-address", "1000", "--uploads-per-address", "1000"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/api/leaderboard", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise SystemExit("benchmark: the server did not start")
            time.sleep(0.2)

    def games(self, since: float = 0.0) -> list[tuple[float, int]]:
        """(finish time, players) of the ladder's games finished after ``since`` (read-only)."""
        db = sqlite3.connect(f"file:{self.folder / 'contest.db'}?mode=ro", uri=True, timeout=30)
        try:
            rows = db.execute(
                "SELECT finished, json_array_length(seating) FROM games WHERE finished > ? ORDER BY finished", (since,)
            ).fetchall()
            return [(float(t), int(n)) for t, n in rows]
        finally:
            db.close()

    def game_keys(self) -> list[str]:
        db = sqlite3.connect(f"file:{self.folder / 'contest.db'}?mode=ro", uri=True, timeout=30)
        try:
            return [r[0] for r in db.execute("SELECT key FROM games ORDER BY finished DESC LIMIT 100")]
        finally:
            db.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def upload(client: httpx.AsyncClient, token: str, name: str, data: bytes) -> int:
    r = await client.post(
        "/api/submissions", files={"bot": (f"{name}.py", data)}, headers={"Authorization": f"Bearer {token}"}
    )
    if r.status_code != 202:
        raise SystemExit(f"benchmark: upload of {name} answered {r.status_code}: {r.text[:200]}")
    return int(r.json()["id"])


async def wait_checked(client: httpx.AsyncClient, token: str, sid: int, bound: float = 300) -> str:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        r = await client.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {token}"})
        status = str(r.json().get("status"))
        if status in ("clean", "failed"):
            return status
        await asyncio.sleep(0.2)
    raise SystemExit(f"benchmark: submission {sid} was not checked within {bound:g} s")


class Load:
    """The clients' shared state: what to ask for, and what they measured."""

    def __init__(self, contest: Contest, bots: list[str], uploads: list[tuple[str, int]], seed: int) -> None:
        self.contest = contest
        self.bots = bots
        self.uploads = uploads  # (token, submission id)
        self.keys = contest.game_keys()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.live_messages = 0
        self.rng = random.Random(seed)

    def request(self, rng: random.Random) -> tuple[str, str, dict[str, str]]:
        kind = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        if kind == PAGES[1]:
            return kind, f"/bots/{rng.choice(self.bots)}", {}
        if kind == PAGES[2] and self.keys:
            return kind, f"/games/{rng.choice(self.keys)}", {}
        if kind == APIS[1]:
            token, sid = rng.choice(self.uploads)
            return kind, f"/api/submissions/{sid}", {"Authorization": f"Bearer {token}"}
        if kind == APIS[0]:
            return kind, "/api/leaderboard", {}
        return PAGES[0], "/", {}


async def client(load: Load, index: int, until: float, think: float) -> None:
    rng = random.Random(load.rng.randrange(2**32) + index)
    async with httpx.AsyncClient(base_url=load.contest.url, timeout=60) as c:
        await asyncio.sleep(rng.uniform(0, 2 * think))  # the clients do not all start at once
        while time.monotonic() < until:
            kind, path, headers = load.request(rng)
            started = time.perf_counter()
            try:
                r = await c.get(path, headers=headers)
                await r.aread()
                ok = r.status_code == 200
            except httpx.HTTPError:
                ok = False
            load.latency[kind].append(time.perf_counter() - started)
            if not ok:
                load.errors[kind] += 1
            await asyncio.sleep(rng.uniform(0, 2 * think))


async def live(load: Load, until: float) -> None:
    """A browser's open leaderboard page: its websocket, read until the run ends."""
    import websockets

    url = load.contest.url.replace("http://", "ws://") + "/ws/leaderboard"
    try:
        async with websockets.connect(url, open_timeout=30) as ws:
            while (left := until - time.monotonic()) > 0:
                try:
                    await asyncio.wait_for(ws.recv(), timeout=left)
                    load.live_messages += 1
                except TimeoutError:
                    break
    except (OSError, websockets.WebSocketException):
        load.errors["live /ws/leaderboard"] += 1


async def lag(load: Load, until: float) -> None:
    """How late the clients' own event loop wakes (a 10 ms sleep's overshoot): the share of every
    measured latency that is the benchmark's process waiting for a CPU, not the server."""
    while time.monotonic() < until:
        started = time.perf_counter()
        await asyncio.sleep(0.01)
        load.latency["client loop lag"].append(max(0.0, time.perf_counter() - started - 0.01))


async def refresh_keys(load: Load, until: float) -> None:
    while time.monotonic() < until:
        await asyncio.sleep(2.0)
        load.keys = await asyncio.to_thread(load.contest.game_keys) or load.keys


async def uploader(load: Load, token: str, base: str, count: int, until: float, seconds: float) -> list[float]:
    """``count`` new versions of one bot spread over the run; each one's time from upload to check."""
    checked: list[float] = []
    async with httpx.AsyncClient(base_url=load.contest.url, timeout=60) as c:
        for n in range(count):
            await asyncio.sleep(seconds / (count + 1))
            if time.monotonic() >= until:
                break
            started = time.perf_counter()
            sid = await upload(c, token, f"b_{base}", bot_bytes(base, f"b_{base}", n + 2))
            load.uploads.append((token, sid))
            await wait_checked(c, token, sid)
            checked.append(time.perf_counter() - started)
    return checked


async def drive(load: Load, opts: argparse.Namespace, token: str) -> list[float]:
    until = time.monotonic() + opts.seconds
    tasks = [asyncio.create_task(client(load, i, until, opts.think)) for i in range(opts.clients)]
    tasks += [asyncio.create_task(live(load, until)) for _ in range(min(opts.live, opts.clients))]
    tasks.append(asyncio.create_task(refresh_keys(load, until)))
    tasks.append(asyncio.create_task(lag(load, until)))
    ups = asyncio.create_task(uploader(load, token, BOTS[0], opts.uploads, until, opts.seconds))
    await asyncio.gather(*tasks)
    return await ups


async def setup(contest: Contest, bots: list[str]) -> list[tuple[str, int]]:
    async with httpx.AsyncClient(base_url=contest.url, timeout=60) as c:
        sids = [
            (contest.tokens[i], await upload(c, contest.tokens[i], f"b_{b}", bot_bytes(b, f"b_{b}")))
            for i, b in enumerate(bots)
        ]
        for token, sid in sids:
            if await wait_checked(c, token, sid) != "clean":
                raise SystemExit(f"benchmark: submission {sid} failed its check")
    return sids


def ladder_rate(games: list[tuple[float, int]], start: float, end: float) -> dict[str, Any]:
    inside = [n for t, n in games if start < t <= end]
    sizes: dict[int, int] = defaultdict(int)
    for n in inside:
        sizes[n] += 1
    return {"games": len(inside), "seconds": round(end - start, 2), "rate": len(inside) / (end - start), "sizes": sizes}


def lower_priority() -> None:
    from arena.server.workers.processes import NICE

    os.nice(NICE)


def tournament(folder: Path, bots: list[str], workers: int, deals: int, name: str) -> dict[str, Any]:
    """``arena tournament`` on the bots' uploaded bytes: its games/s and its wall seconds per game of each size."""
    files = []
    for b in bots:
        path = folder / f"b_{b}.py"
        path.write_bytes(bot_bytes(b, f"b_{b}"))
        files.append(str(path))
    db = folder / f"tournament-{name}.sqlite"
    cmd = [*ARENA, "tournament", *files, "--players", f"2-{len(bots)}", "--games", str(deals)]
    cmd += ["--workers", str(workers), "--db", str(db), "--no-h2h", "--seed", "1"]
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(  # at the ladder workers' CPU priority: the same share of a shared machine
        cmd, capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL, timeout=1800, preexec_fn=lower_priority
    )
    found = re.search(r"played (\d+) games in ([\d.]+) s", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"benchmark: arena tournament failed: {done.stderr.strip()[-300:]}")
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    played, elapsed = int(found[1]), float(found[2])
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT size, COUNT(*), SUM(duration) FROM games GROUP BY size").fetchall()
    finally:
        con.close()
    total = sum(float(d) for _, _, d in rows) or 1.0
    per_game = {int(k): elapsed * float(d) / total / int(n) for k, n, d in rows}
    share = {int(k): float(d) / total / int(n) * played for k, n, d in rows}  # a game's cost by size, mean 1
    return {
        "games": played,
        "seconds": elapsed,
        "rate": played / elapsed,
        "seconds_per_game": per_game,
        "share": share,
        "cpu": cpu,
    }


def compare_cpu(ladder: dict[str, Any], tour: dict[str, Any]) -> float:
    """The same on CPU time, which a machine shared with other work blurs much less than wall time."""
    priced = sum(n * tour["cpu_per_game"] * tour["share"].get(k, 0.0) for k, n in ladder["sizes"].items())
    return priced / ladder["cpu"] if ladder.get("cpu") else 0.0


def compare(ladder: dict[str, Any], tour: dict[str, Any]) -> float:
    """The ladder's speed as a share of the tournament's on the same work (the ladder's size mix)."""
    priced = sum(n * tour["seconds_per_game"].get(k, 0.0) for k, n in ladder["sizes"].items())
    return priced / ladder["seconds"] if ladder["seconds"] else 0.0


def run(opts: argparse.Namespace) -> dict[str, Any]:
    bots = list(BOTS[: opts.bots])
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        folder = Path(tmp)
        contest = Contest(folder / "cup", len(bots), opts.ladder_workers)
        try:
            uploads = asyncio.run(setup(contest, bots))
            time.sleep(opts.warmup)  # the ladder's workers load their bots
            workers = ladder_pids(contest.proc.pid)
            start, ladder_cpu = time.time(), tree_cpu(workers)
            time.sleep(opts.quiet_seconds)
            quiet = ladder_rate(contest.games(start), start, time.time())
            quiet["cpu"] = tree_cpu(workers) - ladder_cpu
            load = Load(contest, [f"b_{b}" for b in bots], list(uploads), opts.seed)
            start, cpu, before = time.time(), cpu_seconds(contest.proc.pid), os.getloadavg()[0]
            checked = asyncio.run(drive(load, opts, contest.tokens[0]))
            loaded = ladder_rate(contest.games(start), start, time.time())
            cpu = cpu_seconds(contest.proc.pid) - cpu
            after = os.getloadavg()[0]
        finally:
            contest.stop()
        small = tournament(folder, bots, opts.ladder_workers, max(1, opts.tournament_deals // 4), "small")
        tour = tournament(folder, bots, opts.ladder_workers, opts.tournament_deals, "full")
        # CPU per game at the margin: the difference of two runs leaves out the start (imports, templates)
        tour["cpu_per_game"] = (tour["cpu"] - small["cpu"]) / max(1, tour["games"] - small["games"])
    pages = [v for k in PAGES for v in load.latency[k]]
    apis = [v for k in APIS for v in load.latency[k]]
    answered = len(pages) + len(apis)
    return {
        "load_average": [round(before, 2), round(after, 2)],
        "server_cpu_ms_per_request": round(1000 * cpu / answered, 2) if answered else None,
        "clients": opts.clients,
        "live_sockets": min(opts.live, opts.clients),
        "think_seconds": opts.think,
        "seconds": opts.seconds,
        "latency_ms": {
            **{k: percentiles(load.latency[k]) for k in (*PAGES, *APIS)},
            "pages (all)": percentiles(pages),
            "api (all)": percentiles(apis),
            "client loop lag": percentiles(load.latency["client loop lag"]),
        },
        "errors": dict(load.errors),
        "live_messages": load.live_messages,
        "uploads_checked_s": [round(s, 2) for s in checked],
        "ladder_quiet": {**quiet, "rate": round(quiet["rate"], 2), "sizes": dict(sorted(quiet["sizes"].items()))},
        "ladder_loaded": {**loaded, "rate": round(loaded["rate"], 2), "sizes": dict(sorted(loaded["sizes"].items()))},
        "tournament": {
            **tour,
            "rate": round(tour["rate"], 2),
            "seconds_per_game": {k: round(v, 4) for k, v in sorted(tour["seconds_per_game"].items())},
            "share": {k: round(v, 3) for k, v in sorted(tour["share"].items())},
            "cpu": round(tour["cpu"], 2),
        },
        "ratio": round(compare(quiet, tour), 3),
        "ratio_cpu": round(compare_cpu(quiet, tour), 3),
        "ladder_cpu_per_game_ms": round(1000 * quiet["cpu"] / quiet["games"], 2) if quiet["games"] else None,
        "tournament_cpu_per_game_ms": round(1000 * tour["cpu_per_game"], 2),
        "ratio_loaded": round(compare(loaded, tour), 3),
        "workers": opts.ladder_workers,
    }


def show(r: dict[str, Any]) -> None:
    print(
        f"{r['clients']} clients ({r['live_sockets']} with the live leaderboard open), think time "
        f"{r['think_seconds']:g} s mean, {r['seconds']:g} s; {len(r['uploads_checked_s'])} uploads during the run "
        f"(upload to check report: {', '.join(f'{s:g}' for s in r['uploads_checked_s']) or '-'} s)"
    )
    print(f"{'endpoint class':28} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, p in r["latency_ms"].items():
        if p["n"]:
            print(f"{kind:28} {p['n']:>6} {p['p50']:>8} {p['p95']:>8} {p['p99']:>8} {p['max']:>8}")
    print(
        f"server CPU per answered request (its live sockets' share included): {r['server_cpu_ms_per_request']} ms; "
        f"load average {r['load_average'][0]} -> {r['load_average'][1]} on {os.cpu_count()} CPUs"
    )
    if r["errors"]:
        print(f"errors: {r['errors']}")
    q, ld, t = r["ladder_quiet"], r["ladder_loaded"], r["tournament"]
    print(
        f"ladder alone: {q['games']} games in {q['seconds']} s ({q['rate']} games/s; sizes {q['sizes']}); "
        f"under load: {ld['rate']} games/s"
    )
    print(
        f"arena tournament, same bots, {r['workers']} worker(s): {t['games']} games in {t['seconds']} s "
        f"({t['rate']} games/s; s/game by size {t['seconds_per_game']})"
    )
    print(f"ladder / tournament on the same work: {r['ratio']} (alone), {r['ratio_loaded']} (under load)")
    print(
        f"on CPU time: ladder {r['ladder_cpu_per_game_ms']} ms a game, tournament {r['tournament_cpu_per_game_ms']} "
        f"ms a game at the margin; ladder / tournament on the same work: {r['ratio_cpu']}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--live", type=int, default=50, help="clients that also hold the live leaderboard open")
    p.add_argument("--think", type=float, default=0.5, help="mean seconds a client waits between requests")
    p.add_argument("--seconds", type=float, default=30.0, help="the load phase")
    p.add_argument("--quiet-seconds", type=float, default=20.0, help="the ladder alone")
    p.add_argument("--warmup", type=float, default=3.0)
    p.add_argument("--uploads", type=int, default=3, help="new versions uploaded during the load phase")
    p.add_argument("--bots", type=int, default=len(BOTS), choices=range(2, len(BOTS) + 1))
    p.add_argument("--ladder-workers", type=int, default=1)
    p.add_argument("--tournament-deals", type=int, default=10, help="deals per table of the tournament")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    opts = p.parse_args(argv)
    result = run(opts)
    if opts.json:
        print(json.dumps(result, indent=2))
    else:
        show(result)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
