"""Feeding record lines to the checker: per-game verdicts, flat error lists, reading files.

A record file may hold many games; each ``game`` line starts a new verdict.
Lines that belong to no game (before the first ``game`` line) get a verdict
of their own with ``game`` None. A malformed line (not JSON, not UTF-8, a
value of the wrong type) fails its game with a ``format`` error; it never
stops the check of the games after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

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
        }


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
            stray.errors.append(f"line {ln}: format {what}")
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


def read_pairs(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object or :class:`_BadLine`) for each non-blank line of a file.

    :raises OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as fh:
        for ln, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield ln, _BadLine("not UTF-8 text")
                continue
            try:
                yield ln, json.loads(text)
            except ValueError as exc:  # JSONDecodeError, and numbers too long to convert
                yield ln, _BadLine(f"not JSON: {exc}")
            except RecursionError:
                yield ln, _BadLine("not JSON: nested too deeply")


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
