"""``arena view``: game records as one self-contained HTML replay viewer.

The page is the template ``templates/viewer.html.j2`` (rendered by the escaping
engine, :mod:`arena.web.render`) with the viewer's CSS and JavaScript inlined
(no CDN, works from ``file://``) and the games embedded as JSON in a
``<script type="application/json">`` element. Everything a contestant
controls (names, ``say`` text, fault details) reaches the page only inside
that JSON, escaped so that no text can end the element (:func:`embed_json`),
and the script puts it into the page as text, never as HTML.

With a seat, the embedded data itself is cut down to what that seat saw
(R10): the other hands become counts, the stock its size, the seed and the
other seats' fault details are left out, so the file can be shared.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..game.visibility import game_seen_by
from .render import GENERATOR, embed_json, render

#: Most games one ``arena view`` page holds, and most bytes of record they may take: a page
#: is one file a browser loads whole (a game of reference bots takes about 20 KB).
MAX_PAGE_GAMES = 10_000
MAX_PAGE_BYTES = 64 * 1024 * 1024


class OutputError(Exception):
    """An output path that would overwrite a file arena did not write."""


def seat_view(events: Sequence[Mapping[str, Any]], seat: int) -> list[dict[str, Any]]:
    """The events as ``seat`` saw them (R10, :func:`arena.game.visibility.seat_data`): its own cards,
    everyone's public facts."""
    return game_seen_by(events, seat)


def viewer_game(events: Sequence[Mapping[str, Any]], *, seat: int | None = None) -> dict[str, Any]:
    """One game as the viewer's script reads it: id, list label, summary, events."""
    shown = seat_view(events, seat) if seat is not None else [dict(e) for e in events]
    header = dict(shown[0])
    if "seed" in header:
        header["seed"] = str(header["seed"])  # beyond 2**53: JavaScript numbers would round it
    shown[0] = header
    return {
        "id": str(header.get("game")),
        "label": f"game {header.get('game')}",
        "summary": summary(events),
        "events": shown,
    }


def summary(events: Sequence[Mapping[str, Any]]) -> str:
    """``"3 players, 12 rounds, greedy first"`` for the game list."""
    header = events[0]
    names = [p.get("name", "?") for p in header.get("players", [])]
    end = next((e for e in reversed(events) if e.get("event") == "end"), None)
    parts = [f"{len(names)} players"]
    if end:
        parts.append(f"{end.get('rounds')} rounds")
        winners = [names[s] for s, place in enumerate(end.get("places", [])) if place == 1 and s < len(names)]
        if winners:
            parts.append(", ".join(winners) + " first")
    else:
        parts.append("unfinished")
    return ", ".join(parts)


def check_seat(games: Iterable[Sequence[Mapping[str, Any]]], seat: int | None) -> None:
    """:raises ValueError: ``seat`` is not a seat of some game."""
    if seat is None:
        return
    for events in games:
        n = len(events[0].get("players", []))
        if not 0 <= seat < n:
            raise ValueError(f"--seat {seat}: game {events[0].get('game')} has seats 0 to {n - 1}")


def render_viewer(
    games: Sequence[Mapping[str, Any]],
    *,
    title: str = "Yard bridge replay",
    seat: int | None = None,
    src: str | None = None,
    back: tuple[str, str] | None = None,
    heading: str = "Yard bridge",
) -> str:
    """The viewer page for ``games`` (from :func:`viewer_game`). With ``src``, games carry no
    events and the page loads ``src + id + ".js"`` when one is opened (the report's viewer).
    ``heading``: the page's header (a contest's name)."""
    data = {"title": title, "seat": seat, "src": src, "games": list(games)}
    link = {"href": back[0], "text": back[1]} if back else None
    return render("viewer.html.j2", title=title, back=link, data=data, heading=heading)


def game_script(game: Mapping[str, Any]) -> str:
    """A game's events as a script for the report's viewer: ``arenaLoad(id, events)``."""
    return f"arenaLoad({embed_json(game['id'])},{embed_json(game['events'])});\n"


def ours(path: Path) -> bool:
    """Whether ``path`` is a page an arena command wrote (it carries :data:`GENERATOR`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return GENERATOR in f.read(4096)
    except OSError:
        return False


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_page(path: Path, text: str, *, mine: bool = False) -> bool:
    """Write ``path``: a new file, or one arena wrote before (``mine``: the caller knows
    it is, as inside a report folder); never another file. A regular file is written
    whole or not at all (a fresh temporary file in its folder, renamed over it, removed on
    any failure); a pipe or a character device (``/dev/stdout``) is written to as it is.
    Returns whether a file was written (not a stream).

    :raises OutputError: ``path`` is a folder, a file arena did not write, another kind of
        file (a block device, a socket), or a pipe nobody reads.
    :raises OSError: the file cannot be written.
    """
    data = text.encode("utf-8", "backslashreplace")  # a lone surrogate as its JSON escape, never an error
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"{path}: is a folder; give a file name for the page")
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        try:  # never wait for a reader: a pipe with none is refused at once
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise OutputError(f"{path}: a pipe that nobody reads") from None
            raise
        os.set_blocking(fd, True)
        with open(fd, "wb") as stream:
            stream.write(data)
        return False
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputError(f"{path}: is not a regular file; choose another --out")
    if (mode is not None or path.is_symlink()) and not mine and not ours(path):  # a dangling link too
        raise OutputError(f"{path}: exists and was not written by arena; choose another --out")
    target = path  # a link is replaced, never written through
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with open(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True
