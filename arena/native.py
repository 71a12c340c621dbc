"""Optional compiled (mypyc) builds of the referee's hot modules, and their guard.

The referee is plain Python; that is the default and the reference. A build
with ``ARENA_COMPILE=1`` (see setup.py) also puts compiled copies of
:data:`COMPILED_MODULES` next to their sources, where Python's import system
would prefer them to the ``.py`` files. So that an edited source is never
silently shadowed by an older compiled copy, a successful build records the
sha256 of each source (:data:`MANIFEST`), and :func:`select` (run by ``arena/__init__``
before any of these modules is imported) loads the compiled modules only
when every source still matches. Otherwise, or with ``ARENA_PURE=1`` in the
environment, all of them load from their ``.py`` files (:func:`describe`
says which, and why). It is all or nothing: compiled modules call each other
directly, so a mix would run stale code.

This module must not import the rest of ``arena`` (setup.py loads it alone).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from typing import Sequence

#: The modules a compiled build compiles (arena/<name>.py).
COMPILED_MODULES: tuple[str, ...] = ("moves", "engine", "turn", "referee")
#: Written by the build next to the sources: "<sha256>  <name>.py" per line.
MANIFEST = "_compiled_sources.txt"

_HERE = os.path.dirname(os.path.abspath(__file__))


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def manifest_text(folder: str) -> str:
    """The manifest for the sources in ``folder`` as they are now (setup.py
    takes it before compiling and writes it once the build succeeded)."""
    return "".join(f"{_digest(os.path.join(folder, name + '.py'))}  {name}.py\n" for name in COMPILED_MODULES)


def compiled_state(folder: str = _HERE) -> str:
    """``"absent"`` (no compiled module), ``"current"`` (all compiled and
    built from the sources now present) or ``"stale"`` (anything else)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    names = os.listdir(folder)
    built = {n.split(".", 1)[0] for n in names if n.endswith(suffixes)} & set(COMPILED_MODULES)
    if not built:
        return "absent"
    if built != set(COMPILED_MODULES) or MANIFEST not in names:
        return "stale"
    expected = {}
    with open(os.path.join(folder, MANIFEST), encoding="ascii") as f:
        for line in f:
            digest, _, filename = line.strip().partition("  ")
            expected[filename] = digest
    for name in COMPILED_MODULES:
        if expected.get(name + ".py") != _digest(os.path.join(folder, name + ".py")):
            return "stale"
    return "current"


class PreferSource(importlib.abc.MetaPathFinder):
    """Loads ``arena.<name>`` for the given names from ``<name>.py``, never a compiled copy."""

    def __init__(self, names: Sequence[str], folder: str = _HERE) -> None:
        self.paths = {f"arena.{name}": os.path.join(folder, name + ".py") for name in names}

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        source = self.paths.get(fullname)
        return importlib.util.spec_from_file_location(fullname, source) if source else None


#: What :func:`select` found: "absent", "current" or "stale" (None before it ran).
STATE: str | None = None


def select() -> bool:
    """Choose compiled or pure modules for this process; True when compiled ones load.

    A stale build falls back to pure Python quietly (a warning would break
    the one-line errors of the command line); ``arena.native.STATE`` and the
    engine benchmark's first line say so.
    """
    global STATE
    STATE = compiled_state()
    if STATE == "current" and os.environ.get("ARENA_PURE") != "1":
        return True
    if STATE != "absent":
        sys.meta_path.insert(0, PreferSource(COMPILED_MODULES))
    return False


def describe() -> str:
    """One line on the modules in use, for benchmarks and bug reports."""
    if STATE == "current" and os.environ.get("ARENA_PURE") != "1":
        return "compiled (mypyc build, arena/native.py)"
    if STATE == "stale":
        return "pure Python (the compiled build is stale: rebuild with ARENA_COMPILE=1, or delete arena/*.so)"
    return "pure Python"
