"""A contest server started as users start it (`arena contest init`, `invite`, `arena serve`), for the server tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena"]
#: The generous bound on anything the tests wait for (polled, never asserted as a speed).
BOUND = 120.0


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})}
    )


def arena_all(*runs: tuple[list[str], dict[str, str]]) -> list[subprocess.CompletedProcess[str]]:
    """Several ``arena`` commands at once (as several authors would run them): their results in order."""
    procs = [
        subprocess.Popen(
            [*ARENA, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, **env},
        )
        for argv, env in runs
    ]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def token_of(out: str) -> str:
    return out.strip().rsplit(": ", 1)[1]


def bot_file(folder: Path, name: str, base: str = "greedy") -> Path:
    text = (ROOT / "bots" / f"{base}.py").read_text()
    path = folder / f"{name}.py"
    path.write_text(text.replace(f'name = "{base}"', f'name = "{name}"'))
    return path


class Server:
    def __init__(self, folder: Path, *extra: str) -> None:
        self.folder = folder
        self.extra = extra
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            # No pace unless the test sets one (a later --pace wins): tests wait for games, never for the clock.
            [*ARENA, "serve", str(self.folder), "--port", str(self.port), "--check-games", "1", "--pace", "0"]
            + list(self.extra),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: self.get("/api/leaderboard")[0] == 200, "the server to answer")

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stderr.close()  # type: ignore[union-attr]

    def stop(self) -> str:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err

    def workers(self) -> list[int]:
        """Process ids of this server's worker processes."""
        assert self.proc is not None
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                    cmd = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid and b"arena.server.workers.processes" in cmd:
                    found.append(int(entry.name))
        return found

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, data, kind = r.status, r.read(), r.headers.get("content-type", "")
        except urllib.error.HTTPError as e:
            status, data, kind = e.code, e.read(), e.headers.get("content-type", "")
        except (urllib.error.URLError, ConnectionError):
            return 0, None
        return status, json.loads(data) if kind.startswith("application/json") else data.decode()

    def get(self, path: str, token: str | None = None) -> tuple[int, Any]:
        return self.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})


def wait_for(condition: Any, what: str, bound: float = BOUND) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {bound:g} s for {what}")
        time.sleep(0.2)
