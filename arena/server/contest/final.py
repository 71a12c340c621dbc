"""The finals: after each round, a tournament of its entrants (``arena tournament``, sandboxed) whose
results are published as a static site (``arena report``), as the 2012 announcement runs them.

Round N's final lives under ``DIR/final/N/`` (made by :mod:`.publish`: the bots' files with their
manifests, the tournament database, the records, the site, its log) and is served at
``/final/N/``. Its settings are the organiser's (:class:`FinalSettings`, from ``arena contest final``
or the desk), with defaults that give standings people can announce: every table size the
entrants fill, rounds of duplicate deals until adjacent ranks are separated or the budget is spent
(docs/RULINGS.md 136). Its entrants are the organiser's choice among :func:`.lineup.pool`: every
approved, clean active version of the rounds so far and the house bots; :mod:`.lineup` says whether
it may start.

Its state is kept in the contest database (``final`` for round one, ``final2`` for round two:
JSON), with the settings it was begun with: a final that stopped (its process killed, the server
restarted) is run again with them and resumes from its tournament database. A published final is
kept as it was run; once the next round is open, a round's final is never (re)run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..store import database as store

#: The rounds that have a final (each round of the announcement).
ROUNDS = (1, 2)
#: Seconds a final begun by the desk may run without a process id (its process is being started).
START_SECONDS = 30.0
#: Words for a round's number on pages and in messages.
ORDINAL = {1: "one", 2: "two"}


@dataclass(frozen=True)
class FinalSettings:
    """How a final is played: the options of ``arena tournament``, with the final's defaults."""

    #: Table sizes; None: every size from 2 to 6 the entrants fill and the round's rules seat.
    players: tuple[int, ...] | None = None
    #: Play rounds of duplicate deals until adjacent ranks are separated (or the budget is spent);
    #: False: a fixed schedule of ``games`` deals per table.
    until_separated: bool = True
    #: Deals per table (fixed), or of the first round (until separated; default 1).
    games: int | None = None
    #: Games at most (until separated; None: the tournament's default, 200 first rounds).
    budget: int | None = None
    confidence: float = 0.95
    top: int | None = None
    seed: int | None = None
    max_tables: int | None = None
    move_seconds: float | None = None
    game_seconds: float | None = None
    #: Whether the house bots play (marked, the authors ranked among themselves too).
    house: bool = True
    #: The entrants' labels (None: the whole :func:`pool`).
    entrants: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Any) -> FinalSettings:
        """Settings as stored, each checked (the database is read as untrusted input; unknown keys
        are ignored). :raises ValueError: not settings."""
        if not isinstance(data, dict):
            raise ValueError("the final's stored settings are not an object")

        def whole(name: str, lo: int, hi: int) -> int | None:
            v = data.get(name)
            if v is not None and (type(v) is not int or not lo <= v <= hi):
                raise ValueError(f"the final's stored {name} is not a whole number from {lo} to {hi}")
            return v

        def real(name: str, lo: float, hi: float) -> float | None:
            v = data.get(name)
            if v is not None and (type(v) not in (int, float) or not lo <= v <= hi):
                raise ValueError(f"the final's stored {name} is not a number from {lo} to {hi}")
            return None if v is None else float(v)

        def flag(name: str, default: bool) -> bool:
            v = data.get(name, default)
            if type(v) is not bool:
                raise ValueError(f"the final's stored {name} is not true or false")
            return v

        players, chosen = data.get("players"), data.get("entrants")
        if players is not None and (
            type(players) is not list or not players or any(type(k) is not int or not 2 <= k <= 6 for k in players)
        ):
            raise ValueError("the final's stored players are not table sizes from 2 to 6")
        if chosen is not None and (type(chosen) is not list or any(type(x) is not str for x in chosen)):
            raise ValueError("the final's stored entrants are not a list of names")
        confidence = real("confidence", 0.5, 0.999999)
        return cls(
            players=tuple(players) if players else None,
            until_separated=flag("until_separated", True),
            games=whole("games", 1, 10**6),
            budget=whole("budget", 1, 10**9),
            confidence=0.95 if confidence is None else confidence,
            top=whole("top", 1, 10**4),
            seed=whole("seed", -(2**256), 2**256),
            max_tables=whole("max_tables", 1, 10**6),
            move_seconds=real("move_seconds", 1e-9, 86400),
            game_seconds=real("game_seconds", 1e-9, 86400),
            house=flag("house", True),
            entrants=tuple(chosen) if chosen is not None else None,
        )

    def described(self) -> str:
        """The settings in words (one line, as the desk and the command line show them)."""
        sizes = ", ".join(str(k) for k in self.players) if self.players else "every size the entrants fill"
        if self.until_separated:
            how = f"until adjacent ranks are separated at {self.confidence:.0%}" + (
                f" (places 1 to {self.top + 1})" if self.top else ""
            )
            how += f", budget {self.budget} games" if self.budget else ", the default budget (200 first rounds)"
            if self.games:
                how += f", {self.games} deal{'s' * (self.games != 1)} a table first"
        else:
            deals = self.games or 10
            how = f"{deals} deal{'s' * (deals != 1)} a table"
        house = "" if self.house else "; house bots left out"
        return f"tables of {sizes}; {how}{house}"


def key(number: int) -> str:
    """The contest setting holding round ``number``'s final."""
    return "final" if number == 1 else f"final{number}"


def home(folder: Path, number: int) -> Path:
    return Path(folder) / "final" / str(number)


def state(db: sqlite3.Connection, number: int = 1) -> dict[str, Any]:
    try:
        data = json.loads(store.setting(db, key(number)) or "{}")
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def set_state(db: sqlite3.Connection, number: int = 1, **data: Any) -> None:
    store.set_setting(db, key(number), json.dumps(data))


def update_state(db: sqlite3.Connection, number: int, **changes: Any) -> None:
    """Change some of the final's state, keeping the rest (its settings, its entrants), in one transaction."""
    with store.writing(db):
        row = db.execute("SELECT value FROM contest WHERE key = ?", (key(number),)).fetchone()
        try:
            data = json.loads(row[0]) if row else {}
        except ValueError:
            data = {}
        data = {**(data if isinstance(data, dict) else {}), **changes}
        db.execute("INSERT OR REPLACE INTO contest VALUES (?, ?)", (key(number), json.dumps(data)))


def settings_of(data: dict[str, Any]) -> FinalSettings | None:
    try:
        return FinalSettings.from_dict(data["settings"]) if "settings" in data else None
    except (ValueError, TypeError):
        return None


def alive(pid: Any) -> bool:
    """Whether the process ``pid`` runs arena (a final's process; a pid taken again since is not)."""
    if type(pid) is not int or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return b"arena" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc: the process exists


def current_state(db: sqlite3.Connection, number: int) -> str:
    """The final's state as it is: a ``running`` final whose process is gone is ``interrupted``."""
    data = state(db, number)
    now = str(data.get("state", ""))
    if now == "running" and not alive(data.get("pid")):
        since = data.get("since")
        begun = float(since) if isinstance(since, (int, float)) else 0.0
        starting = data.get("pid") is None and time.time() - begun < START_SECONDS
        return now if starting else "interrupted"  # a process being started has no pid for a moment
    return now


def progress(folder: Path, number: int) -> int | None:
    """Games the final's tournament has stored so far (None: none begun, or unreadable)."""
    path = home(folder, number) / "final.sqlite"
    if not path.is_file() or path.is_symlink():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def interrupted(db: sqlite3.Connection) -> None:
    """At the server's start: a final left running by a dead process can be run again (it resumes)."""
    for number in ROUNDS:
        if state(db, number).get("state") == "running" and not alive(state(db, number).get("pid")):
            update_state(db, number, state="interrupted", detail="the final's process stopped; run it again to resume")


def published(db: sqlite3.Connection) -> list[int]:
    """The rounds whose final is published."""
    return [n for n in ROUNDS if state(db, n).get("state") == "published"]
