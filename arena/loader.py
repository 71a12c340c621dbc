"""Finding bots (by registered name or file path) and running trusted ones in-process.

Bot files given by path are untrusted and run in the sandbox
(:mod:`arena.sandbox`). The reference bots may run in the referee's process
for speed (:func:`load_trusted`), with the same imports and the same seeded
``random`` a sandboxed bot gets, so they behave identically in both.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .botenv import make_importer
from .engine import GameResult, RoundResult, derive_seed
from .errors import BotLoadError
from .referee import GameInfo
from .turn import Turn

MAX_SOURCE_BYTES = 256 * 1024
_BUILTINS = {k: v for k, v in builtins.__dict__.items() if k not in ("open", "exec", "eval", "compile", "input", "breakpoint", "exit", "quit", "help")}


@dataclass(frozen=True)
class BotSource:
    """A bot's code and identity."""

    name: str
    source: str
    path: str | None = None
    description: str = ""
    origin: str = "file"  # "file" or "registry"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @property
    def label(self) -> str:
        """How records and tables name the code: registry name or file path."""
        return self.name if self.origin == "registry" else (self.path or self.name)


def describe(source: str) -> tuple[str | None, str]:
    """(``Bot.name`` if set literally, first docstring line) of bot source, without running it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, ""
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    name = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Bot":
            for item in node.body:
                if (isinstance(item, ast.Assign) and len(item.targets) == 1
                        and isinstance(item.targets[0], ast.Name) and item.targets[0].id == "name"
                        and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)):
                    name = item.value.value
    return name, (doc[0] if doc else "")


def read_bot_file(path: str | os.PathLike[str], origin: str = "file", name: str | None = None) -> BotSource:
    """Read a bot file. :raises BotLoadError: missing, unreadable, too large or not UTF-8."""
    p = Path(path)
    if not p.exists():
        raise BotLoadError("no such file", path=str(path))
    if p.is_dir():
        raise BotLoadError("is a folder, not a bot file", path=str(path))
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise BotLoadError(f"cannot read: {exc.strerror}", path=str(path)) from None
    if len(data) > MAX_SOURCE_BYTES:
        raise BotLoadError(f"bot source is {len(data)} bytes; the limit is {MAX_SOURCE_BYTES}", path=str(path))
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BotLoadError("not UTF-8 text", path=str(path)) from None
    declared, doc = describe(source)
    return BotSource(name or declared or p.stem, source, str(path), doc, origin)


def registry() -> dict[str, str]:
    """Registered bots (entry-point group ``arena.bots``): name -> file path."""
    from .plugins import get_plugin_manager

    found: dict[str, str] = {}
    for batch in get_plugin_manager().hook.arena_bots():
        for name, path in batch:
            found.setdefault(name, str(path))
    return found


def resolve_bot(spec: str) -> BotSource:
    """A bot by registered name (``greedy``) or file path (``mybot.py``).

    :raises BotLoadError: neither a registered name nor a readable bot file.
    """
    looks_like_path = spec.endswith(".py") or os.sep in spec or "/" in spec or os.path.exists(spec)
    if not looks_like_path:
        bots = registry()
        if spec in bots:
            return read_bot_file(bots[spec], origin="registry", name=spec)
        raise BotLoadError(f"no bot named {spec!r} (registered: {', '.join(sorted(bots))}; or give a .py file)", path=spec)
    return read_bot_file(spec)


def compile_trusted(src: BotSource) -> Any:
    """Compile bot source with the plain compiler (trusted code only)."""
    try:
        return compile(src.source, src.path or f"<bot {src.name}>", "exec")
    except SyntaxError as exc:
        raise BotLoadError(f"syntax error: {exc.msg}", path=src.path or src.name, line=exc.lineno) from None


def instantiate(code: Any, src: BotSource, seed: int, builtins_dict: dict[str, Any] | None = None) -> Any:
    """Run the module code in a fresh namespace and return ``Bot()``."""
    env = dict(_BUILTINS if builtins_dict is None else builtins_dict)
    env["__import__"] = make_importer(seed)
    namespace: dict[str, Any] = {"__name__": "bot", "__builtins__": env}
    try:
        exec(code, namespace)
    except BotLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - report any load-time error
        raise BotLoadError(f"error while loading: {type(exc).__name__}: {exc}", path=src.path or src.name) from None
    cls = namespace.get("Bot")
    if not isinstance(cls, type):
        raise BotLoadError("defines no class named Bot", path=src.path or src.name)
    if not callable(getattr(cls, "move", None)):
        raise BotLoadError("class Bot has no move(self, turn) method", path=src.path or src.name)
    try:
        return cls()
    except Exception as exc:  # noqa: BLE001
        raise BotLoadError(f"Bot() failed: {type(exc).__name__}: {exc}", path=src.path or src.name) from None


class InProcessPlayer:
    """A trusted bot running in the referee's process (the fast path)."""

    def __init__(self, bot: Any, name: str) -> None:
        self.bot = bot
        self.name = name
        self._start = getattr(bot, "start_game", None)
        self._end_round = getattr(bot, "end_round", None)
        self._end_game = getattr(bot, "end_game", None)
        self.move: Callable[[Turn], None] = bot.move

    def start_game(self, info: GameInfo) -> None:
        if self._start is not None:
            self._start(info)

    def end_round(self, result: RoundResult) -> None:
        if self._end_round is not None:
            self._end_round(result)

    def end_game(self, result: GameResult) -> None:
        if self._end_game is not None:
            self._end_game(result)

    def close(self) -> None:
        pass


class TrustedFactory:
    """Makes a fresh in-process player per game and seat from compiled source."""

    def __init__(self, src: BotSource) -> None:
        self.src = src
        self.code = compile_trusted(src)
        self.name = src.name

    def __call__(self, game_seed: Any, seat: int) -> InProcessPlayer:
        seed = derive_seed(game_seed, "bot", seat)
        return InProcessPlayer(instantiate(self.code, self.src, seed), self.name)


def load_trusted(src: BotSource) -> TrustedFactory:
    """A factory of in-process players for trusted code (reference bots, ``--trusted``)."""
    return TrustedFactory(src)
