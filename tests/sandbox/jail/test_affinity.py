"""Sandbox workers run on their referee's CPU (Limits.same_cpu): affinity helpers."""

import os
import subprocess
import sys

import pytest

from arena.sandbox.limits import current_cpu

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")


def test_current_cpu_is_one_we_may_use() -> None:
    assert current_cpu() in os.sched_getaffinity(0)


def test_pin_binds_the_process_and_its_children_inherit() -> None:
    cpu = max(os.sched_getaffinity(0))
    code = (
        "import os, subprocess, sys\n"
        "from arena.sandbox.limits import pin_to_one_cpu\n"
        f"assert pin_to_one_cpu({cpu}) == {cpu}\n"
        "child = subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'],"
        " capture_output=True, text=True)\n"
        "print(sorted(os.sched_getaffinity(0)), child.stdout.strip())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == [f"[{cpu}]", f"[{cpu}]"]
