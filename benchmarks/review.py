"""What a review page on the desk costs the server (issue 27, item 4): the server process's CPU per
view of ``/desk/ID`` for an upload of about 150 KB with a previous version of the same size,
against the CPU per view of the leaderboard page measured in the same run.

It starts a contest as an organiser does (``arena contest init``, ``invite``, ``arena serve`` as a
subprocess, one check worker, no ladder), uploads two versions of a bot through the API and waits
for their checks (and, where the server makes it, for the desk's stored view), then asks for each
page ``--views`` times and reads the server process's CPU time (``/proc/PID/stat``: its own user
and system time, not its workers') before and after.

Two pairs of versions: *hostile*, lines from a small vocabulary in two orders that make
``difflib``'s matcher quadratic (the red team's 15 s a view), and *edit*, the same 150 KB file
with a few lines changed (an ordinary new version).

    python benchmarks/review.py [--views 20] [--root DIR]

``--root`` runs another checkout's ``arena`` (its code, this script): measure the code before a
change with the same script, in the same session, and compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
#: Lines of the hostile versions' vocabulary: each line repeats just below difflib's "popular" cut.
VOCABULARY = 101


def greedy(name: str, root: Path) -> str:
    return (root / "bots" / "greedy.py").read_text().replace('name = "greedy"', f'name = "{name}"')


def padded(name: str, root: Path, lines: list[str]) -> bytes:
    return (greedy(name, root) + "\n" + "\n".join(lines) + "\n").encode()


def versions(kind: str, name: str, root: Path, size: int) -> tuple[bytes, bytes]:
    count = size // 16
    if kind == "hostile":
        words = [f"value_{i:04d} = 0" for i in range(VOCABULARY)]
        return (
            padded(name, root, [words[i % VOCABULARY] for i in range(count)]),
            padded(name, root, [words[(3 * i) % VOCABULARY] for i in range(count)]),
        )
    lines = [f"value_{i:06d} = {i}" for i in range(count)]
    edited = [line.replace("= ", "= 1 + ") if i % 997 == 0 else line for i, line in enumerate(lines)]
    return padded(name, root, lines), padded(name, root, edited)


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def arena(root: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=root, env=env)
    if done.returncode:
        raise SystemExit(f"arena {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def token(out: str) -> str:
    return out.strip().splitlines()[-1].rsplit(": ", 1)[1]


def prepared(folder: Path, sid: int) -> bool:
    """Whether upload ``sid`` is checked and, with a server that stores the desk's views, has its view
    (read from the database: asking for the page would render it before it is measured)."""
    db = sqlite3.connect(f"file:{folder}/contest.db?mode=ro", uri=True)
    try:
        status = db.execute("SELECT status FROM submissions WHERE id = ?", (sid,)).fetchone()
        if status is None or status[0] in ("queued", "checking"):
            return False
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'reviews'").fetchone():
            return True  # a server of before the stored views
        return db.execute("SELECT 1 FROM reviews WHERE submission = ?", (sid,)).fetchone() is not None
    finally:
        db.close()


def per_view(client: httpx.Client, pid: int, path: str, views: int) -> tuple[float, float, int, float]:
    """(server CPU seconds per view, wall seconds per view, page bytes, server CPU of the first view)."""
    cpu = cpu_of(pid)
    size = len(client.get(path).content)  # the first view (and the page's size)
    first = cpu_of(pid) - cpu
    cpu, wall = cpu_of(pid), time.monotonic()
    for _ in range(views):
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
    return (cpu_of(pid) - cpu) / views, (time.monotonic() - wall) / views, size, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--views", type=int, default=20)
    parser.add_argument("--size", type=int, default=150_000, help="bytes of each version (default 150 000)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose arena serves")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    root = opts.root.resolve()
    results: dict[str, Any] = {"root": str(root), "size": opts.size}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "cup"
        organiser = token(arena(root, "contest", "init", str(folder)))
        ann = token(arena(root, "contest", "invite", str(folder), "ann"))
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(root)}
        cmd = [sys.executable, "-m", "arena", "serve", str(folder), "--port", str(port), "--ladder-workers", "0"]
        server = subprocess.Popen(cmd, cwd=root, env=env, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, timeout=600) as client:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if client.get("/api/leaderboard").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline:
                        raise SystemExit("the server did not answer")
                    time.sleep(0.2)
                ids = {}
                for kind in ("edit", "hostile"):
                    for source in versions(kind, f"{kind}bot", root, opts.size):
                        sent = client.post(
                            "/api/submissions", content=source, headers={"Authorization": f"Bearer {ann}"}
                        )
                        assert sent.status_code == 202, sent.text
                        ids[kind] = sent.json()["id"]
                csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
                assert csrf
                client.post("/login", data={"token": organiser, "csrf": csrf.group(1)})
                for sid in ids.values():  # its check, and (where the server makes one) its stored view
                    deadline = time.monotonic() + 600
                    while not prepared(folder, sid):
                        if time.monotonic() > deadline:
                            raise SystemExit("the check (or the desk's view) did not come")
                        time.sleep(0.5)
                peer = per_view(client, server.pid, "/", opts.views)
                results["leaderboard"] = {"cpu_ms": peer[0] * 1000, "wall_ms": peer[1] * 1000, "bytes": peer[2]}
                for kind, sid in ids.items():
                    views = opts.views if kind == "edit" else max(2, opts.views // 10)
                    cpu, wall, size, first = per_view(client, server.pid, f"/desk/{sid}", views)
                    page = client.get(f"/desk/{sid}").text
                    results[kind] = {
                        "cpu_ms": cpu * 1000,
                        "first_ms": first * 1000,
                        "wall_ms": wall * 1000,
                        "bytes": size,
                        "views": views,
                        "ratio": cpu / peer[0] if peer[0] else None,
                        "too_large": "Too large to diff" in page,
                    }
        finally:
            server.terminate()
            server.wait(30)
    if opts.json:
        print(json.dumps(results, indent=2))
        return
    print(f"arena at {root}; versions of {opts.size} bytes")
    print(f"  leaderboard page: {results['leaderboard']['cpu_ms']:8.1f} ms of the server's CPU a view")
    for kind in ("edit", "hostile"):
        r = results[kind]
        note = " (diff: too large, both versions offered)" if r["too_large"] else ""
        print(
            f"  review, {kind:7}: {r['cpu_ms']:8.1f} ms a view over {r['views']} views "
            f"({r['first_ms']:.0f} ms the first), {r['wall_ms']:.0f} ms wall, {r['bytes'] / 1000:.0f} KB; "
            f"{r['ratio']:.1f}x the leaderboard's{note}"
        )


if __name__ == "__main__":
    main()
