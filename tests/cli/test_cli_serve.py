"""``arena serve`` where it cannot listen (issue 30, item 4): one line and exit 2, before it says "serving"."""

from __future__ import annotations

import socket
from pathlib import Path

from support.server import arena


def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # It said "serving ... (Ctrl-C stops)", started its workers, then printed uvicorn's
    # "[Errno 98] ... address already in use" and exited 3.
    folder = tmp_path / "cup"
    assert arena("contest", "init", str(folder)).returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # a free port this test picks, then holds
        taken.listen()
        port = taken.getsockname()[1]
        done = arena("serve", str(folder), "--port", str(port), "--check-workers", "0", "--ladder-workers", "0")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"arena: error: port {port} is in use on 127.0.0.1") and done.stderr.count("\n") == 1
    assert "serving" not in done.stderr and "Errno" not in done.stderr and done.stdout == ""


def test_a_host_that_is_not_this_machines_is_one_line_and_exit_2(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    assert arena("contest", "init", str(folder)).returncode == 0
    for host, said in (("192.0.2.1", "is not an address of this machine"), ("nosuch.invalid", "no address")):
        done = arena("serve", str(folder), "--host", host, "--check-workers", "0", "--ladder-workers", "0")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"arena: error: --host {host}") and said in done.stderr
        assert "serving" not in done.stderr
