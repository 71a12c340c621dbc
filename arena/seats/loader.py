"""Finding bots (by registered name or file path) and running trusted ones in-process.

Bot files given by path are untrusted and run in the sandbox
(:mod:`arena.sandbox`). The reference bots may run in the referee's process
for speed (:func:`load_trusted`), with the same imports and the same seeded
``random`` a sandboxed bot gets, so they behave identically in both.
"""

from __future__ import annotations

import builtins
import os
import warnings
from collections.abc import Callable
from typing import Any

from ..botapi.imports import make_importer
from ..botapi.turn import Turn
from ..errors import BotLoadError
from ..game.engine import GameResult, RoundResult
from ..game.referee import GameInfo
from ..game.seeds import seed_key
from ..trust.botsource import (
    BotSource,
    parse_source,
    read_bot_file,
)
from ..trust.text import escape, storable
from .contract import InProcessFactory

_BUILTINS = {
    k: v
    for k, v in builtins.__dict__.items()
    if k not in ("open", "exec", "eval", "compile", "input", "breakpoint", "exit", "quit", "help")
}


def registry() -> dict[str, str]:
    """Registered bots (entry-point group ``arena.bots``): name -> file path."""
    from ..plugins import get_plugin_manager

    found: dict[str, str] = {}
    for batch in get_plugin_manager().hook.arena_bots():
        for name, path in batch:
            found.setdefault(name, str(path))
    return found


def resolve_bot(spec: str, *, lenient: bool = False, single_link: bool = False) -> BotSource:
    """A bot by registered name (``greedy``) or file path (``mybot.py``); ``lenient`` as
    in :func:`read_bot_file`.

    :raises BotLoadError: neither a registered name nor a readable bot file.
    """
    looks_like_path = spec.endswith((".py", ".js")) or os.sep in spec or "/" in spec or os.path.exists(spec)
    if not looks_like_path:
        bots = registry()
        if spec in bots:
            # installed by the organiser (a package manager may link its files): the file itself
            return read_bot_file(os.path.realpath(bots[spec]), origin="registry", name=spec)
        raise BotLoadError(
            f"no bot named {escape(spec, 60)!r} (registered: {', '.join(sorted(bots))}; or give a .py file)",
            path=storable(spec),
        )
    return read_bot_file(spec, lenient=lenient, single_link=single_link)


def compile_trusted(src: BotSource) -> Any:
    """Compile bot source with the plain compiler (trusted code only).

    :raises BotLoadError: the file could not be read, or does not parse or compile.
    """
    where = src.label
    if src.problem:
        raise BotLoadError(src.problem, path=where)
    tree = parse_source(src.source, where)
    try:
        with warnings.catch_warnings():  # its SyntaxWarnings are the author's, not the organiser's
            warnings.simplefilter("ignore")
            return compile(tree, src.path or f"<bot {src.name}>", "exec")
    except SyntaxError as exc:
        raise BotLoadError(f"syntax error: {escape(exc.msg, 120)}", path=where, line=exc.lineno) from None
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:
        raise BotLoadError(f"cannot compile: {type(exc).__name__}", path=where) from None


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


class TrustedFactory(InProcessFactory):
    """Makes a fresh in-process player per game and seat from compiled source (its stream and
    close are the trivial ones of an in-process factory)."""

    def __init__(self, src: BotSource) -> None:
        super().__init__(src.name)
        self.src = src
        self.code = compile_trusted(src)

    def __call__(self, bot_key: Any, seat: int) -> InProcessPlayer:
        """A player for ``seat``; its ``random`` is seeded from the game's bot key (arena/game/seeds.py)."""
        seed = seed_key(bot_key).derive("bot", seat)  # derive_seed(bot_key, "bot", seat), the key's MAC kept
        return InProcessPlayer(instantiate(self.code, self.src, seed), self.name)


def load_trusted(src: BotSource) -> TrustedFactory:
    """A factory of in-process players for trusted code (reference bots, ``--trusted``)."""
    return TrustedFactory(src)
