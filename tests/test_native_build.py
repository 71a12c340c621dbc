"""The optional compiled build (arena/native.py, setup.py) really builds, loads,
and writes the same game records as pure Python."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import native

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypyc") is None, reason="mypy/mypyc not installed")


def run(tree: Path, code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "ARENA_PURE"}
    environ.update(env, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tree, env=environ,
                         timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.mark.timeout(600)
def test_compiled_build_loads_and_writes_identical_records(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    shutil.copytree(ROOT / "arena", tree / "arena", ignore=shutil.ignore_patterns("__pycache__", "*.so", native.MANIFEST))
    shutil.copytree(ROOT / "bots", tree / "arena" / "bots", ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "mypyc", *(f"arena/{m}.py" for m in native.COMPILED_MODULES)],
                           cwd=tree, capture_output=True, text=True, timeout=540)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    (tree / "arena" / native.MANIFEST).write_text(native.manifest_text(str(tree / "arena")))

    play = ("import arena, arena.engine, sys\n"
            "from arena.cli import main\n"
            "print(arena.COMPILED, arena.engine.__file__.endswith('.py'))\n"
            "sys.exit(main(['play', 'random', 'greedy', 'heuristic', '--games', '30', '--seed', '3', '-q',"
            " '--replay', sys.argv[1] if len(sys.argv) > 1 else 'r.jsonl']))\n")
    compiled = run(tree, play.replace("sys.argv[1] if len(sys.argv) > 1 else 'r.jsonl'", "'compiled.jsonl'"))
    pure = run(tree, play.replace("sys.argv[1] if len(sys.argv) > 1 else 'r.jsonl'", "'pure.jsonl'"), ARENA_PURE="1")
    assert compiled.splitlines()[0] == "True False"     # compiled modules in use
    assert pure.splitlines()[0] == "False True"         # forced pure
    assert compiled.splitlines()[1:] == pure.splitlines()[1:]
    assert (tree / "compiled.jsonl").read_bytes() == (tree / "pure.jsonl").read_bytes()

    # an edited source makes the build stale: pure Python again, quietly
    engine = tree / "arena" / "engine.py"
    engine.write_text(engine.read_text() + "\n# edited\n")
    again = run(tree, play.replace("sys.argv[1] if len(sys.argv) > 1 else 'r.jsonl'", "'stale.jsonl'"))
    assert again.splitlines()[0] == "False True"
    assert (tree / "stale.jsonl").read_bytes() == (tree / "pure.jsonl").read_bytes()
