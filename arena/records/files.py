"""Game records (docs/record-format.md): writing JSON Lines, reading them back, and
printing a game as a readable log."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from ..game.cards import SUIT_SYMBOLS, Card
from ..game.visibility import game_seen_by
from ..trust.text import escape


class RecordWriter:
    """Appends games to one JSON Lines file, one event a line, a game at a time."""

    def __init__(self, path: str | Path, mode: str = "w") -> None:
        self.path = Path(path)
        self.file: IO[str] = open(self.path, mode, encoding="utf-8")

    def write_game(self, events: Iterable[dict[str, Any]]) -> None:
        dumps = json.dumps
        self.file.write("".join(dumps(e, separators=(",", ":")) + "\n" for e in events))
        self.file.flush()

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Longest line a record reader takes, in bytes (the longest line arena writes is a few KiB).
MAX_LINE_BYTES = 64 * 1024
#: Most bytes one game of a record may take (a game of reference bots takes about 20 KB).
MAX_GAME_BYTES = 16 * 1024 * 1024


class RecordError(ValueError):
    """A record file that cannot be read or is not in the game-record format: the message is
    one line naming the file (and the line) and what is wrong."""


def _open(path: str | Path) -> IO[bytes]:
    """``path`` opened for reading, never waiting: a named pipe with no writer reads as empty.

    :raises RecordError: missing, a folder, or unreadable.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise RecordError(f"{path}: is a folder, not a record file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _parse(raw: bytes) -> dict[str, Any]:
    """One line as a JSON object with an ``event``. :raises ValueError: it is not one."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError:  # an integer past Python's digit limit (4300)
        raise ValueError("not JSON this reader takes (a number with too many digits)") from None
    except RecursionError:
        raise ValueError("not JSON this reader takes (nested too deeply)") from None
    if type(value) is not dict or "event" not in value:
        raise ValueError("a record line is a JSON object with an 'event'")
    return value


def read_sized_games(path: str | Path) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """Yield each game of a record file, its shape checked (:mod:`arena.records.shape`), with
    the bytes it took. Reads a line at a time, at most :data:`MAX_LINE_BYTES` of it, and
    at most :data:`MAX_GAME_BYTES` for a game (blank lines count).

    :raises RecordError: the file cannot be read, or a line is not in the record format.
    """
    from .shape import ShapeError, check_event, check_header

    game: list[dict[str, Any]] | None = None
    size = seats = 0
    with _open(path) as f:
        number = 0
        while True:
            try:
                raw = f.readline(MAX_LINE_BYTES + 1)
            except OSError as exc:
                raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
            if not raw:
                break
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise RecordError(f"{path}:{number}: a line longer than {MAX_LINE_BYTES} bytes")
            size += len(raw)
            if size > MAX_GAME_BYTES:
                raise RecordError(f"{path}:{number}: a game longer than {MAX_GAME_BYTES} bytes")
            if not raw.strip():
                continue
            try:
                event = _parse(raw)
            except ValueError as exc:
                what = "not a game record: " if game is None else ""
                raise RecordError(f"{path}:{number}: {what}{exc}") from None
            try:
                if event["event"] == "game":
                    if game:
                        yield game, size - len(raw)
                        size = len(raw)
                    game = [check_header(event)]
                    seats = len(game[0]["players"])
                elif game is None:
                    raise RecordError(f"{path}:{number}: the first line of a game is its 'game' line")
                else:
                    game.append(check_event(event, seats))
            except ShapeError as exc:
                raise RecordError(f"{path}:{number}: {exc}") from None
    if game is None:
        raise RecordError(f"{path}: no game in this record file")
    yield game, size


def read_games(path: str | Path) -> Iterator[list[dict[str, Any]]]:
    """Yield each game of a record file as its list of events, checked as :func:`read_sized_games` does.

    :raises RecordError: the file cannot be read, or is not a game record.
    """
    for game, _ in read_sized_games(path):
        yield game


#: How a penalty draw names the rank that caused it: "an 8", never "a 8".
EFFECT_RANKS = {"7": "a 7", "8": "an 8", "a": "an ace"}


def sym(card: str) -> str:
    """``10h`` -> ``10♥`` for people."""
    return Card(card).symbol


def format_game(events: list[dict[str, Any]], *, seat: int | None = None) -> Iterator[str]:
    """A game as a readable log: one move a line, then round results.

    With ``seat``, only what that seat saw (R10, decided by :mod:`arena.game.visibility`): other
    hands and draws, the seed, other seats' fault details and printed output are not shown.
    The log prints what it is given: a hand given as a count prints as a count, a draw
    without its card as "a card". Every line is terminal-safe whatever the record holds
    (:func:`arena.trust.text.escape` on the whole line: a game id or rules name of a hostile
    record prints its control characters as visible escapes, as names and says always did).
    """
    for line in _log_lines(events, seat):
        yield escape(line)


def _log_lines(events: list[dict[str, Any]], seat: int | None) -> Iterator[str]:
    """The lines of :func:`format_game`, before the escaping."""
    if seat is not None:
        events = game_seen_by(events, seat)
    header = events[0]
    names = {p["seat"]: p["name"] for p in header.get("players", [])}

    def who(s: int) -> str:
        return f"{escape(names.get(s, '?'), 60)}#{s}"

    def card(e: dict[str, Any]) -> str:
        return sym(e["card"]) if "card" in e else "a card"

    shown_seed = f"  seed {header['seed']}" if "seed" in header else ""
    yield f"game {header.get('game')}{shown_seed}  rules {header.get('rules', {}).get('name', 'contest')}"
    yield "players: " + ", ".join(who(s) for s in sorted(names))
    line: list[str] = []
    mover: int | None = None

    def flush() -> Iterator[str]:
        if line:
            yield f"  {who(mover) if mover is not None else ''}: " + " ".join(line)
            line.clear()

    for e in events[1:]:
        kind = e["event"]
        if kind == "deal":
            yield from flush()
            yield f"-- round {e['round']}: {who(e['first'])} starts; scores {e['scores']}"
            for s, hand in enumerate(e["hands"]):
                shown = f"{hand} cards" if type(hand) is int else " ".join(sym(c) for c in hand)
                yield f"   {who(s)}: {shown}"
        elif kind == "put":
            if mover != e["seat"]:
                yield from flush()
                mover = e["seat"]
            text = ("opening " if e.get("opening") else "") + sym(e["card"])
            if "suit" in e and not e.get("opening"):
                text += f"->{SUIT_SYMBOLS[e['suit']]}"
            if line and line[-1].startswith("draws "):
                text = "puts " + text  # "draws 8♣ puts 8♣", never "draws 8♣ 8♣"
            line.append(text)
        elif kind == "draw":
            if mover != e["seat"]:
                yield from flush()
                mover = e["seat"]
            line.append("draws " + card(e))
        elif kind == "finish":
            if mover != e["seat"]:
                yield from flush()
                mover = e["seat"]
            line.append("|")
            yield from flush()
            mover = None
        elif kind == "penalty":
            yield f"    {who(e['seat'])} draws {card(e)} ({EFFECT_RANKS.get(e['rank'], e['rank'])})"
        elif kind == "skip":
            yield f"    {who(e['seat'])} loses a turn"
        elif kind == "reshuffle":
            stock = e["stock"] if type(e["stock"]) is int else len(e["stock"])
            yield f"    pile reshuffled into a stock of {stock}"
        elif kind == "fault":
            detail = f": {escape(e['detail'], 400)}" if "detail" in e else ""
            yield f"    FAULT {who(e['seat'])} {escape(e['kind'], 40)}{detail}"
        elif kind == "say":
            if mover != e["seat"]:  # said or printed outside the speaker's own move
                yield from flush()
                mover = e["seat"]
            line.append(f"{'prints' if e.get('output') else 'says'} {escape(repr(e['text']))}")
        elif kind == "round":
            yield from flush()
            winner = "no winner (move guard)" if e["winner"] is None else f"{who(e['winner'])} went out"
            burned = f"; burned: {', '.join(who(s) for s in e['burned'])}" if e["burned"] else ""
            yield f"== round {e['round']}: {winner}; points {e['points']}; scores {e['scores']}{burned}"
        elif kind == "end":
            yield from flush()
            losers = ", ".join(who(s) for s in e["losers"]) or "none"
            yield (
                f"## game over after {e['rounds']} rounds: scores {e['scores']}; places {e['places']}; losers {losers}"
            )
