"""The guard of the optional compiled build: stale or partial builds never load."""

import importlib.machinery
import os
import subprocess
import sys

import arena
from arena import native

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def make_tree(tmp_path, compiled=native.COMPILED_MODULES, manifest=True):
    for name in native.COMPILED_MODULES:
        (tmp_path / f"{name}.py").write_text(f"WHO = 'source {name}'\n")
    for name in compiled:
        (tmp_path / f"{name}{SUFFIX}").write_bytes(b"not really compiled")
    if manifest:
        (tmp_path / native.MANIFEST).write_text(native.manifest_text(str(tmp_path)))
    return tmp_path


def test_no_compiled_module_is_absent(tmp_path):
    make_tree(tmp_path, compiled=(), manifest=False)
    assert native.compiled_state(str(tmp_path)) == "absent"


def test_a_complete_build_of_the_present_sources_is_current(tmp_path):
    assert native.compiled_state(str(make_tree(tmp_path))) == "current"


def test_an_edited_source_makes_the_build_stale(tmp_path):
    make_tree(tmp_path)
    with open(tmp_path / "engine.py", "a") as f:
        f.write("# edited\n")
    assert native.compiled_state(str(tmp_path)) == "stale"


def test_a_partial_build_or_a_missing_manifest_is_stale(tmp_path):
    assert native.compiled_state(str(make_tree(tmp_path, compiled=("engine",)))) == "stale"
    (tmp_path / native.MANIFEST).unlink()
    assert native.compiled_state(str(tmp_path)) == "stale"


def test_prefer_source_loads_the_py_file_even_beside_a_compiled_copy(tmp_path):
    make_tree(tmp_path)
    spec = native.PreferSource(["engine"], str(tmp_path)).find_spec("arena.engine")
    assert spec is not None and spec.origin == str(tmp_path / "engine.py")
    assert native.PreferSource(["engine"], str(tmp_path)).find_spec("arena.cards") is None


def test_arena_pure_forces_the_source_modules():
    code = "import arena, arena.engine, arena.referee; print(arena.COMPILED, arena.engine.__file__, arena.referee.__file__)"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ARENA_PURE": "1"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "False" and out[1].endswith("engine.py") and out[2].endswith("referee.py")


def test_this_process_reports_what_it_loaded():
    import arena.engine
    assert arena.COMPILED == (not arena.engine.__file__.endswith(".py"))



def test_a_stale_build_runs_the_sources_and_says_why(monkeypatch):
    monkeypatch.setattr(native, "compiled_state", lambda folder=None: "stale")
    before, state = list(sys.meta_path), native.STATE
    try:
        assert native.select() is False
        assert isinstance(sys.meta_path[0], native.PreferSource)
        assert native.describe().startswith("pure Python (the compiled build is stale")
    finally:
        sys.meta_path[:] = before
        native.STATE = state
