"""Bot folders with a build, and a count of the builds that ran (issue 27, item 3).

A build runs as ``/bin/sh -c BUILD`` (pid 1 of its own PID namespace); the host's ``/proc`` shows
that shell with its command line, so a marker in the build command tells each build apart from
everything else on the machine, wherever it was started (a worker process, a server's queue).
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "examples" / "kits" / "python-stdio"


def marker() -> str:
    return f"arena-build-{uuid.uuid4().hex[:12]}"


def folder_with_build(where: Path, name: str, build: str) -> Path:
    """The python-stdio kit as the bot ``name``, with ``build = BUILD`` in its bot.toml."""
    bot = where / name
    shutil.copytree(KIT, bot)
    toml = (bot / "bot.toml").read_text(encoding="utf-8").replace('name = "stdio-py"', f'name = "{name}"')
    (bot / "bot.toml").write_text(toml + f"build = {build!r}\n", encoding="utf-8")
    return bot


def build_shells(mark: str) -> list[int]:
    """The pids of the live build shells whose command line holds ``mark``: the shell that is pid 1
    of its namespace only (a child the shell forked holds the same command line until it execs: on a
    loaded machine the watch saw one, and counted a build twice)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"/bin/sh\0-c\0") and mark.encode() in cmdline and first_of_namespace(entry):
                found.append(int(entry))
    return found


def first_of_namespace(pid: str) -> bool:
    """Whether the process is pid 1 of its innermost PID namespace (its status's last NSpid)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("NSpid:"):
            return line.split()[-1] == "1"
    return False


class BuildWatch:
    """Every build shell holding ``mark`` seen while it is open (looked for every 50 ms: give the
    build a second at least, ``sleep 1`` in its command)."""

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            self.seen.update(build_shells(self.mark))

    def __enter__(self) -> BuildWatch:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def builds(self) -> int:
        return len(self.seen)
