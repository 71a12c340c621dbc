"""The probe: which hardening layers this machine supports, asked of a throw-away process.

:func:`probe` runs :func:`~arena.sandbox.jail.harden.harden` in a fresh interpreter
(``python -I``, empty environment, new session) and reads back its report; the
referee's side only (it needs ``subprocess``, which a template must not hold).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .harden import LAYERS, PROBE_UID, HardenReport

_PROBE_CODE = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from arena.sandbox.jail.harden import harden
report = harden(**json.loads(sys.argv[2]))
line = sys.stdin.readline()  # the hardened process must still talk over its pipes
reply = dict(report.as_dict(), echo=json.loads(line), check=sum(i * i for i in range(1000)))
sys.stdout.write(json.dumps(reply) + "\\n")
sys.stdout.flush()
"""


def probe(*, uid: int | None = None, timeout: float = 30.0) -> HardenReport:
    """Harden a fresh interpreter and report which layers this machine supports.

    Runs ``harden`` with default limits in ``[sys.executable, "-I", "-c", ...]``
    (empty environment, new session); as root it drops to ``uid`` (default
    :data:`PROBE_UID`).  A probe that dies or garbles its answer reports every
    layer as failed.
    """
    if uid is None and os.geteuid() == 0:
        uid = PROBE_UID
    root = str(Path(__file__).resolve().parents[3])
    args = json.dumps({"uid": uid})
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-c", _PROBE_CODE, root, args],
            input='{"ping": 1}\n',
            capture_output=True,
            text=True,
            env={},
            cwd="/",
            start_new_session=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return HardenReport(layers={name: f"failed: probe worker: {exc}" for name in LAYERS})
    try:
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        if proc.returncode != 0 or data.get("echo") != {"ping": 1} or data.get("check") != 332833500:
            raise ValueError("bad answer")
        return HardenReport.from_dict(data)
    except (ValueError, IndexError, AttributeError) as exc:
        tail = (proc.stderr.strip().splitlines() or [""])[-1][-200:]
        why = f"probe worker exited with {proc.returncode} ({exc}): {tail}"
        return HardenReport(layers={name: f"failed: {why}" for name in LAYERS})
