"""Build hook for the OPTIONAL compiled referee (mypyc); everything else is in pyproject.toml.

Pure Python is the default and needs nothing from this file. To compile the
referee's hot modules (arena/moves.py, engine.py, turn.py, referee.py)::

    pip install mypy setuptools wheel
    ARENA_COMPILE=1 pip install --no-build-isolation -e '.[test,bench]'

After a successful build, arena/_compiled_sources.txt records the sha256 of
each compiled source; ``arena/native.py`` loads the compiled modules only
while those sources are unchanged (an edited .py wins, quietly; `arena.native.describe()` says which modules run).
"""

from __future__ import annotations

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_ext import build_ext

setup_kwargs: dict = {}
if os.environ.get("ARENA_COMPILE") == "1":
    from mypyc.build import mypycify

    # arena/native.py alone, without importing the package being built.
    spec = importlib.util.spec_from_file_location("arena_native", os.path.join("arena", "native.py"))
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    manifest = native.manifest_text("arena")   # the sources as they are compiled now

    class BuildExt(build_ext):
        """Writes the manifest only once the compiled modules are built."""

        def run(self) -> None:
            super().run()
            target = "arena" if self.inplace else os.path.join(self.build_lib, "arena")
            with open(os.path.join(target, native.MANIFEST), "w", encoding="ascii") as f:
                f.write(manifest)

    setup_kwargs = {"ext_modules": mypycify([f"arena/{name}.py" for name in native.COMPILED_MODULES]),
                    "cmdclass": {"build_ext": BuildExt}}

setup(**setup_kwargs)
