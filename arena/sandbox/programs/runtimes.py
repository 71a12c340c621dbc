"""Which runtime runs a bot program, and its factory (:func:`program_factory`)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import BotLoadError
from ..limits import Limits

if TYPE_CHECKING:
    from ...trust.botsource import BotSource
    from .seat import ProgramFactory

_HERE = Path(__file__).parent
#: MooTools Core's server build, installed by the project's set-up (``npm ci``: package.json).
MOOTOOLS = _HERE.parents[2] / "node_modules" / "mootools" / "lib" / "mootools-core-1.5.2-server.js"
_API_2012 = re.compile(r"\bBridge\.AI\s*=")


def uses_2012_api(source: str) -> bool:
    """Whether a ``.js`` bot is written against the 2012 contest's API (it assigns ``Bridge.AI``)."""
    return _API_2012.search(source) is not None


def mootools(where: str) -> bytes:
    """MooTools Core's bytes. :raises BotLoadError: not installed."""
    try:
        return MOOTOOLS.read_bytes()
    except OSError:
        raise BotLoadError(
            "this bot uses the 2012 API, which needs MooTools Core: run `npm ci` in the arena's folder",
            path=where,
        ) from None


#: Runtimes by :attr:`~arena.trust.botsource.BotSource.runtime`.
RUNTIMES = ("node", "program")


def program_factory(src: BotSource, limits: Limits | None = None) -> ProgramFactory:
    """A seat factory for a bot program. :raises BotLoadError: it cannot be staged or started."""
    from .process import node_runtime
    from .seat import ProgramFactory

    limits = limits or Limits()
    if src.problem:
        raise BotLoadError(src.problem, path=src.label)
    if src.runtime == "node":
        files = dict(src.files)
        if set(files) != {"bot.js"}:
            raise BotLoadError("a node bot is one file, bot.js", path=src.label)
        if not uses_2012_api(files["bot.js"].decode("utf-8", "replace")):
            factory = ProgramFactory(src, node_runtime(limits, "bot.js"), files, limits)
            factory.program = {"language": "javascript", "api": "protocol v1"}
            return factory
        files["shim.js"] = (_HERE / "js" / "contest2012.js").read_bytes()
        files["mootools.js"] = mootools(src.label)
        factory = ProgramFactory(src, node_runtime(limits, "shim.js"), files, limits)
        factory.program = {"language": "javascript", "api": "2012 (MooTools Core 1.5.2)"}
        return factory
    if src.runtime == "program" and src.files:
        return folder_factory(src, limits)
    raise BotLoadError(f"no runtime {src.runtime!r} (known: {', '.join(RUNTIMES)})", path=src.label)


#: The PATH a program's command is looked up in (on the referee's side, before it starts).
PATH = "/usr/local/bin:/usr/bin:/bin"


def folder_factory(src: BotSource, limits: Limits) -> ProgramFactory:
    """A bot folder: built once (when its bot.toml says how), then staged and run by its ``run``."""
    import hashlib
    import shlex
    import shutil

    from ...trust.botfolder import MANIFEST, parse_manifest
    from .build import run_build
    from .process import Runtime
    from .seat import ProgramFactory

    files = dict(src.files)
    fields = parse_manifest(files[MANIFEST], src.label)
    if "build" in fields:
        files = run_build(fields["build"], files, src.label)
    argv = shlex.split(fields["run"])
    if "/" not in argv[0]:
        found = shutil.which(argv[0], path=PATH)
        if found is None:
            raise BotLoadError(f"{MANIFEST}: run: no program {argv[0]!r} on this machine", path=src.label)
        argv[0] = found
    elif argv[0].lstrip("./") not in files:
        raise BotLoadError(f"{MANIFEST}: run: {argv[0]!r} is not in the folder (after the build)", path=src.label)
    env = (("PATH", PATH), ("LANG", "C.UTF-8"))
    factory = ProgramFactory(src, Runtime(fields["language"], tuple(argv), env), files, limits)
    source = dict(src.files)
    built = {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items()) if source.get(rel) != data}
    factory.program = {
        "language": fields["language"],
        "run": fields["run"],
        "build": fields.get("build"),
        "built": built,
    }
    return factory


def program_layers(runtime: str, limits: Limits | None = None) -> dict[str, str]:
    """The layers a program of ``runtime`` runs under on this machine: a trivial program of it
    started under the launcher (its report), or every layer failed, saying why."""
    from ..failures import WorkerError
    from .process import PROGRAM_LAYERS, ProgramProcess, Runtime, node_runtime

    limits = limits or Limits()
    if runtime not in RUNTIMES:
        return {name: f"failed: no runtime {runtime!r}" for name in PROGRAM_LAYERS}
    probe = node_runtime(limits, "--version") if runtime == "node" else Runtime("program", ("/bin/true",))
    import shutil
    import tempfile

    stage = tempfile.mkdtemp(prefix="arena-probe-")  # an empty stage, as a bot's is staged
    os.chmod(stage, 0o555)
    try:
        proc = ProgramProcess(stage, probe, limits)
    except (WorkerError, OSError) as exc:
        return {name: f"failed: {runtime} did not start ({exc})" for name in PROGRAM_LAYERS}
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    proc.kill()
    return {name: proc.report.get(name, "failed: not reported") for name in PROGRAM_LAYERS}
