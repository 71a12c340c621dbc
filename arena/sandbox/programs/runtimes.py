"""Which runtime runs a bot program, and its factory (:func:`program_factory`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import BotLoadError
from ...trust.text import escape
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
    """A seat factory for a bot program. :raises BotLoadError: it cannot be staged or started, or
    (a ``.js`` file) it does not compile: refused before any game, with its line and column."""
    limits = limits or Limits()
    if src.problem:
        raise BotLoadError(src.problem, path=src.label)
    if src.runtime == "node":
        files = dict(src.files)
        if set(files) != {"bot.js"}:
            raise BotLoadError("a node bot is one file, bot.js", path=src.label)
        return node_factory(src, files, limits)
    if src.runtime == "program" and src.files:
        return folder_factory(src, limits)
    raise BotLoadError(f"no runtime {src.runtime!r} (known: {', '.join(RUNTIMES)})", path=src.label)


#: Files the arena stages beside a node bot (bot.js): its own, so no bot's file name may be theirs.
_STAGED_JS = frozenset({"bot.js", "shim.js", "mootools.js", "errors.js", "check.js"})
_JS_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.js")


def bot_file_name(src: BotSource) -> str:
    """The name a node bot's faults cite (``mybot.js:37``): its author's file name, or the name it
    is stored under (``NAME.js``); ``bot.js`` when that is not a plain name or is one the arena stages."""
    name = os.path.basename(src.path) if src.path else f"{src.name}.js"
    return name if _JS_FILE_NAME.fullmatch(name) and name not in _STAGED_JS - {"bot.js"} else "bot.js"


def _js(name: str) -> bytes:
    return (_HERE / "js" / name).read_bytes()


def node_factory(src: BotSource, files: dict[str, bytes], limits: Limits) -> ProgramFactory:
    """A ``.js`` bot, once its syntax check passed (:func:`check_syntax`), staged with ``errors.js``
    (a fault names the author's file and line) and, for the 2012 API, the shim and MooTools Core.
    :raises BotLoadError: as :func:`program_factory`."""
    from .process import node_runtime
    from .seat import ProgramFactory

    check_syntax(src, limits)
    marker = b'/* BOT_FILE */ "bot.js"'
    files["errors.js"] = _js("errors.js").replace(marker, json.dumps(bot_file_name(src)).encode())
    if uses_2012_api(files["bot.js"].decode("utf-8", "replace")):
        files["shim.js"] = _js("contest2012.js")
        files["mootools.js"] = mootools(src.label)
        factory = ProgramFactory(src, node_runtime(limits, "shim.js"), files, limits)
        factory.program = {"language": "javascript", "api": "2012 (MooTools Core 1.5.2)"}
    else:
        factory = ProgramFactory(src, node_runtime(limits, "--require", "./errors.js", "bot.js"), files, limits)
        factory.program = {"language": "javascript", "api": "protocol v1"}
    return factory


#: Syntax checks done in this process: the sha256 of a bot.js -> () when it compiles, else
#: (message, line, column). A file's bytes decide it, so a tournament's preflight, ``arena check``
#: and the factory that follows pay for one check.
_CHECKED: dict[str, tuple[str, int | None, int | None] | tuple[()]] = {}


def check_syntax(src: BotSource, limits: Limits | None = None) -> None:
    """Compile a ``.js`` bot as it will run, before any game, with its runtime's node in the
    program sandbox (``js/check.js`` compiles it and runs nothing of it). Other bots: nothing.

    :raises BotLoadError: a syntax error, one line (``mybot.js:4:13: syntax error: Unexpected
        token ';'``), or the check could not run."""
    import hashlib

    data = dict(src.files).get("bot.js")
    if src.runtime != "node" or data is None:
        return
    key = hashlib.sha256(data).hexdigest()
    found = _CHECKED.get(key)
    if found is None:
        mode = "script" if uses_2012_api(data.decode("utf-8", "replace")) else "program"
        found = _CHECKED[key] = _compile(data, mode, limits or Limits(), src.label)
        while len(_CHECKED) > 256:
            del _CHECKED[next(iter(_CHECKED))]
    if found:
        message, line, column = found
        raise BotLoadError(f"syntax error: {escape(message, 120)}", path=src.label, line=line, column=column)


def _compile(data: bytes, mode: str, limits: Limits, where: str) -> tuple[str, int | None, int | None] | tuple[()]:
    """Run check.js on ``data`` in a stage of its own: () when it compiles, else the syntax error.
    :raises BotLoadError: the check did not run to its end."""
    import shutil
    import tempfile

    from ..failures import WorkerError, WorkerTimeout
    from .process import ProgramProcess, node_runtime

    stage = tempfile.mkdtemp(prefix="arena-jscheck-")
    try:
        for name, content in (("bot.js", data), ("check.js", _js("check.js"))):
            with open(os.path.join(stage, name), "xb") as fh:
                fh.write(content)
            os.chmod(os.path.join(stage, name), 0o444)
        os.chmod(stage, 0o555)
        runtime = node_runtime(limits, "--experimental-vm-modules", "--no-warnings", "check.js", mode)
        try:
            proc = ProgramProcess(stage, runtime, limits)
        except (WorkerError, OSError) as exc:
            raise BotLoadError(f"the syntax check did not start: {exc}", path=where) from None
        budget = limits.load_seconds
        proc.begin(budget)
        try:
            proc.recv()  # it writes nothing: the read ends when it exits
        except WorkerTimeout:
            raise BotLoadError(f"the syntax check took more than {budget:g} s", path=where) from None
        except WorkerError:
            pass
        finally:
            proc.kill()
    finally:
        os.chmod(stage, 0o700)
        shutil.rmtree(stage, ignore_errors=True)
    if proc.proc.returncode == 0:
        return ()
    stderr = proc.stderr.decode("utf-8", "replace")
    error = syntax_error(stderr)
    if error is None:  # not a SyntaxError: node could not compile it all the same (nested too deep...)
        thrown = next((x for x in stderr.splitlines() if _THROWN.fullmatch(x)), None)
        raise BotLoadError(f"does not compile: {escape(thrown or proc.last_words() or 'no message', 160)}", path=where)
    return error


_WHERE = re.compile(r"bot\.js:(\d{1,7})")
_CARET = re.compile(r"[ \t]*\^+")
_THROWN = re.compile(r"[A-Z][A-Za-z]*Error: .+")


def syntax_error(stderr: str) -> tuple[str, int | None, int | None] | None:
    """(message, line, column) of the SyntaxError node printed, as it prints one uncaught::

        bot.js:4
            var x = ;
                    ^

        SyntaxError: Unexpected token ';'

    None when ``stderr`` holds no SyntaxError (the check failed otherwise)."""
    lines = stderr.splitlines()
    message = next((x[len("SyntaxError: ") :] for x in lines if x.startswith("SyntaxError: ")), None)
    if message is None:
        return None
    at = next((i for i, x in enumerate(lines) if _WHERE.fullmatch(x)), None)
    if at is None:
        return message, None, None
    line = int(_WHERE.fullmatch(lines[at]).group(1))  # type: ignore[union-attr]  # matched just above
    caret = lines[at + 2] if at + 2 < len(lines) else ""
    column = caret.index("^") + 1 if _CARET.fullmatch(caret) else None
    return message, line, column


#: The PATH a program's command is looked up in (on the referee's side, before it starts).
PATH = "/usr/local/bin:/usr/bin:/bin"


def folder_factory(src: BotSource, limits: Limits) -> ProgramFactory:
    """A bot folder: built once (when its bot.toml says how: its source's ``built`` when it was
    built before, else :func:`.buildcache.built_files`), then staged and run by its ``run``."""
    import hashlib
    import shlex
    import shutil

    from ...trust.botfolder import MANIFEST, parse_manifest
    from .buildcache import built_files
    from .process import Runtime
    from .seat import ProgramFactory

    files = dict(src.files)
    fields = parse_manifest(files[MANIFEST], src.label)
    if "build" in fields:  # built before (a tournament's parent, the server's queue), else once in this process
        files = dict(src.built) if src.built is not None else built_files(fields["build"], files, src.label)
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
