"""Running ``arena`` as a user does: in-process (``main``, output captured by pytest's ``capsys``)
or as a process (``python -m arena``), and the shape every refusal must have."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from arena.cli import main


def _main(argv: tuple[Any, ...]) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:  # argparse exits by itself
        return exc.code if isinstance(exc.code, int) else 1


def run(capsys: Any, *argv: Any) -> tuple[int, str, str]:
    """Run ``arena ARGV`` in-process, its output captured by pytest's ``capsys``: (exit code,
    stdout, stderr). An exception escaping ``main`` (a traceback) fails the test that ran it."""
    code = _main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def run_here(*argv: Any, cwd: str | Path | None = None) -> tuple[int, str, str]:
    """Run ``arena ARGV`` in-process without ``capsys`` (in a helper, a thread, a loop), from
    the folder ``cwd`` if given: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = _main(argv)
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def arena_here(*argv: Any, cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """:func:`run_here` as a :class:`subprocess.CompletedProcess` (a fresh interpreter costs
    about a second a command; this costs none)."""
    code, out, err = run_here(*argv, cwd=cwd)
    return subprocess.CompletedProcess([str(a) for a in argv], code, out, err)


def run_process(*argv: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m arena ARGV`` as a process (``kwargs`` go to :func:`subprocess.run`)."""
    options: dict[str, Any] = {"capture_output": True, "text": True, "timeout": timeout, **kwargs}
    return subprocess.run([sys.executable, "-m", "arena", *argv], **options)


def one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    """A refusal: exit 2, nothing on stdout, one line on stderr holding each of ``needles``."""
    assert code == 2, (code, err)
    assert out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected a one-line error, got:\n{err}"
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


def read_only_runner() -> str | None:
    """How this machine can give us read-only media: 'chmod' (not root) or 'mount' (root with
    mount namespaces); None when neither works."""
    if os.geteuid() != 0:
        return "chmod"
    if shutil.which("unshare") and subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0:
        return "mount"
    return None
