"""Feeding record lines to the checker: per-game verdicts, flat error lists, reading files.

A record file may hold many games; each ``game`` line starts a new verdict.
Lines that belong to no game (before the first ``game`` line) get a verdict
of their own with ``game`` None. A malformed line (not JSON, not UTF-8, a
value of the wrong type) fails its game with a ``format`` error; it never
stops the check of the games after it.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from .phases import GameCheck
from .state import _Abort


@dataclass
class GameVerdict:
    """What the checker found in one game of a record."""

    game: Any  # the id on the game line; None for lines outside any game
    line: int  # the record line the game starts on
    lines: int = 0  # record lines that belong to it
    errors: list[str] = field(default_factory=list)
    #: True for the lines before the first game line (not a game; always a failure).
    outside: bool = False
    #: Errors counted but not kept (past :data:`MAX_STRAY_ERRORS`).
    dropped: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def first_error(self) -> str:
        """The first disagreement, without the ``game ID`` prefix every error carries."""
        if not self.errors:
            return ""
        text = self.errors[0]
        prefix = f"game {self.game} "
        return text[len(prefix) :] if text.startswith(prefix) else text

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "line": self.line,
            "lines": self.lines,
            "ok": self.ok,
            "errors": list(self.errors),
            **({"outside": True} if self.outside else {}),
            **({"dropped": self.dropped} if self.dropped else {}),
        }


#: Most errors kept for the lines before the first game line (the rest are counted): a long
#: garbage file must not grow the checker's memory line by line.
MAX_STRAY_ERRORS = 20


class _BadLine:
    """A line that could not be parsed, with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def verify_pairs(pairs: Iterable[tuple[int, Any]]) -> list[GameVerdict]:
    """Check (line number, object or :class:`_BadLine`) pairs; one verdict per game."""
    verdicts: list[GameVerdict] = []
    stray: GameVerdict | None = None  # lines before any game line
    verdict: GameVerdict | None = None
    game: GameCheck | None = None
    for ln, ev in pairs:
        if isinstance(ev, dict) and ev.get("event") == "game":
            if game is not None and not game.done and not game.aborted:
                game.errors.append(f"game {game.gid} line {ln}: R9 game has no end line before the next game")
            verdict = GameVerdict(None, ln, 1)
            verdicts.append(verdict)
            try:
                game = GameCheck(verdict.errors, ln, ev)
            except Exception as exc:  # noqa: BLE001 - a hostile game line fails its game, not the check
                verdict.errors.append(f"game ? line {ln}: format malformed game line ({type(exc).__name__})")
                game = None
                continue
            verdict.game = game.gid
            continue
        if verdict is None:  # before the first game line
            if stray is None:
                stray = GameVerdict(None, ln, outside=True)
                verdicts.append(stray)
            stray.lines += 1
            what = (
                ev.reason
                if isinstance(ev, _BadLine)
                else (
                    f"{ev['event']} line before any game line"
                    if isinstance(ev, dict) and "event" in ev
                    else f"not an event object: {ev!r:.80}"
                )
            )
            if len(stray.errors) < MAX_STRAY_ERRORS:
                stray.errors.append(f"line {ln}: format {what}")
            else:
                stray.dropped += 1
            continue
        verdict.lines += 1
        if game is None:  # its game line was malformed: the game has failed already
            continue
        if isinstance(ev, _BadLine) or not isinstance(ev, dict) or "event" not in ev:
            reason = ev.reason if isinstance(ev, _BadLine) else f"not an event object: {ev!r:.80}"
            game.errors.append(f"game {game.gid} line {ln}: format {reason}")
            if not game.done:
                game.aborted = True
            continue
        if game.done:
            game.errors.append(f"game {game.gid} line {ln}: format {ev['event']!r:.40} line after the game's end line")
            game.aborted, game.done = True, False  # report once
            continue
        if game.aborted:
            continue
        try:
            game.feed(ln, ev)
        except _Abort:
            game.aborted = True
        except Exception as exc:  # noqa: BLE001 - a value of the wrong type: that game fails, the rest go on
            game.errors.append(
                f"game {game.gid} line {ln}: format malformed {ev.get('event')!r:.40} line ({type(exc).__name__})"
            )
            game.aborted = True
    if game is not None and not game.done and not game.aborted:
        game.errors.append(f"game {game.gid}: R9 record ends before the game's end line")
    return verdicts


#: Longest line read, in bytes; the rest of a longer line is skipped, and the line fails its game.
MAX_LINE_BYTES = 64 * 1024


def _open(path: str) -> BinaryIO:
    """``path`` for reading, never waiting for a writer (a named pipe with none reads as empty).

    :raises OSError: missing, a folder, or unreadable.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, "is a folder", path)
    os.set_blocking(fd, True)
    return open(fd, "rb")


def _lines(fh: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, its bytes, or None for a line longer than :data:`MAX_LINE_BYTES`)."""
    ln = 0
    while raw := fh.readline(MAX_LINE_BYTES + 1):
        ln += 1
        if len(raw) <= MAX_LINE_BYTES:
            yield ln, raw
            continue
        while raw and not raw.endswith(b"\n"):  # skip the rest, a piece at a time
            raw = fh.readline(MAX_LINE_BYTES + 1)
        yield ln, None


def _parse(raw: bytes | None) -> Any:
    """A line's JSON value, or a :class:`_BadLine` saying why it has none."""
    if raw is None:
        return _BadLine(f"a line longer than {MAX_LINE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _BadLine("not UTF-8 text")
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, and numbers too long to convert
        return _BadLine(f"not JSON: {exc}")
    except RecursionError:
        return _BadLine("not JSON: nested too deeply")


def read_pairs(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object or :class:`_BadLine`) for each non-blank line of a file.

    :raises OSError: the file cannot be opened or read.
    """
    with _open(path) as fh:
        for ln, raw in _lines(fh):
            if raw is None or raw.strip():
                yield ln, _parse(raw)


def not_a_record(path: str) -> str | None:
    """Why ``path`` is not a game record at all (its first non-blank line is not a JSON
    object with an ``event``: a database, a binary), or None when it starts as one.

    :raises OSError: the file cannot be opened or read.
    """
    for ln, ev in read_pairs(path):
        if isinstance(ev, _BadLine):
            return f"line {ln}: {ev.reason}"
        if not isinstance(ev, dict) or "event" not in ev:
            return f"line {ln}: not an event object"
        return None
    return None


def verify_file(path: str) -> list[GameVerdict]:
    """One verdict per game of a JSON Lines record file. :raises OSError: unreadable."""
    return verify_pairs(read_pairs(path))


def verify_lines(lines: Iterable[Any]) -> list[GameVerdict]:
    """One verdict per game of already-parsed record objects (line numbers count from 1)."""
    return verify_pairs(enumerate(lines, 1))


def check_lines(lines: Iterable[Any]) -> list[str]:
    """Every error in already-parsed record objects; [] when every game is valid."""
    return [e for v in verify_lines(lines) for e in v.errors]


def check_file(path: str) -> list[str]:
    """Every error in a JSON Lines record file; [] when every game is valid."""
    return [e for v in verify_file(path) for e in v.errors]


def printable(text: str) -> str:
    """``text`` safe for a terminal: control, format (bidi) and other unprintable characters escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
