"""Running ``arena`` as a user does: in-process (``main``, output captured by pytest's ``capsys``)
or as a process (``python -m arena``), and the shape every refusal must have."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

from arena.cli import main


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """Run ``arena ARGV`` in-process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse exits by itself
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def run_process(*argv: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m arena ARGV`` as a process (``kwargs`` go to :func:`subprocess.run`)."""
    return subprocess.run(
        [sys.executable, "-m", "arena", *argv], capture_output=True, text=True, timeout=timeout, **kwargs
    )


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
