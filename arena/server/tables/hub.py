"""Tables over the network: people play the ladder's bots, and each other, at the server.

A signed-in person (an author, the organiser, or a guest of the organiser's link) opens a
table: seats for people (the opener sits at seat 0; others join by the table's link) and
seats for bots chosen among the ladder's active, checked versions. The game starts once
every person's seat is taken.

The :class:`Hub` is the tables' side in the server's process, and it does only the server's work:
who sits where, the caps, and relaying. Each game is played by the tables worker, a process of
its own (:mod:`arena.server.tables.worker`, started and started again by the server's
supervisor): the referee, the bots in their sandboxes, the forward-model requests programs make,
the fallback and the people's browser seats. The Hub passes a person's actions to the worker and
the worker's states of that person's seat back to the person's websockets, as the worker wrote
them (the seat's R10 view only: the public history and the seat's own hand, as a bot's ``turn``
has it).

A table lives in the contest database from the moment it opens (its seating, then its secret
seed and each person's action): a restart of the server, or of the worker, resumes it where it
was (docs/RULINGS.md 130), and a game that cannot be resumed is recorded as abandoned with what
was played. A finished game is recorded in ``table_games``
(:mod:`arena.server.store.table_games`), never in the ladder's ratings.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ...game.rules import CONTEST, Rules
from ...web.seat import BadAction, check_action
from ..store import database as store
from ..store import table_games as tablestore
from ..store import versions

#: Seconds a person has for one move before the fallback moves for the seat (a timeout fault).
MOVE_SECONDS = 120.0
#: Seconds a table waits for its people; then it is closed unplayed.
WAIT_SECONDS = 600.0
#: Seconds a finished table stays open for its people to see the result (then only its record).
KEEP_SECONDS = 600.0
#: Tables waiting or playing at once on the server, per person, and per client address (whoever
#: signs in from it: one address with ten authors' tokens held all 20 tables).
MAX_TABLES = 20
TABLES_PER_PERSON = 2
TABLES_PER_ADDRESS = 4
#: Bytes of one websocket message from a person at most; messages per :data:`RATE_WINDOW` seconds.
MAX_MESSAGE = 4096
MAX_MESSAGES = 60
RATE_WINDOW = 10.0
#: Seats at a table, and the game's point limit (R2.3) a table may choose.
MIN_SEATS, MAX_SEATS = 2, 6
MIN_LIMIT = 10

#: Who a person is: ``("author", id)``, ``("organiser", 0)`` or ``("guest", "ID")``.
Person = tuple[str, Any]

#: What a seat's page is told while its game is resumed by a worker.
RESUMING = "The server restarted: your game resumes where it was in a moment."


class TableError(Exception):
    """A request about a table that cannot be done; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def seat_names(names: list[str]) -> list[str]:
    """Each seat's name at the table, one per seat: a name that repeats (a bot seated twice) is
    ``NAME (2)``, ``NAME (3)`` from its second seat on, so that the table, its log, the messages and
    the record all say the same. (No person's or bot's name has a parenthesis: a suffix makes no other
    seat's name.)"""
    counts: dict[str, int] = {}
    out = []
    for name in names:
        counts[name] = counts.get(name, 0) + 1
        out.append(name if counts[name] == 1 else f"{name} ({counts[name]})")
    return out


class PersonSlot:
    """A person's seat as the server holds it: the newest state of the seat the worker sent (its
    JSON text, versioned here), and the websockets following it (woken on each change)."""

    def __init__(self, person: Person | None, name: str) -> None:
        self.person = person
        self.name = name
        self.version = 0
        self.phase = "waiting"
        self.text = json.dumps({"phase": "waiting", "events": [], "messages": [], "hand": []})
        self.connection = 0  # the newest websocket's number: an older one stops
        #: Each open websocket: its loop, the event that wakes it, and its refusals to send.
        self.watchers: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Event, list[str]]] = {}
        self.lock = threading.Lock()

    def _wake(self) -> None:
        for loop, event, _ in list(self.watchers.values()):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop is gone (the server stopping)
                pass

    def show(self, phase: str, text: str) -> None:
        """A new state of the seat (``text``: its JSON object, as the page reads it)."""
        with self.lock:
            self.phase, self.text = phase, text
            self.version += 1
        self._wake()

    def show_state(self, **state: Any) -> None:
        """A state the server makes itself (waiting for people, closed unplayed)."""
        base = {"events": [], "messages": [], "hand": [], **state}
        self.show(str(base.get("phase")), json.dumps(base))

    def amend(self, **changes: Any) -> None:
        """The newest state with ``changes`` (a worker gone: resuming, no move asked)."""
        try:
            state = json.loads(self.text)
        except ValueError:
            state = {}
        self.show_state(**{**state, **changes})

    def refuse(self, message: str) -> None:
        """A refusal from the worker, for the seat's open pages."""
        for _, _, errors in list(self.watchers.values()):
            errors.append(message)
            del errors[:-5]
        self._wake()

    def snapshot_text(self) -> tuple[int, str]:
        """The newest state as the page gets it (its version inside), and the version."""
        with self.lock:
            text, version = self.text, self.version
        return version, f'{text[:-1]},"version":{version}}}' if text.endswith("}") and len(text) > 2 else text

    def snapshot(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self.snapshot_text()[1])
        return state


@dataclass
class BotSeat:
    submission: int
    bot: str
    version: int = 0
    #: A program's built files, from the build cache (the table never builds).
    built: tuple[tuple[str, bytes], ...] | None = None

    @property
    def label(self) -> str:
        """``annbot v2``, as the ladder names it (:func:`arena.server.store.versions.player`)."""
        return versions.player(self.bot, self.version) if self.version else self.bot


@dataclass
class NetworkTable:
    id: str
    owner: Person
    limit: int
    seats: list[PersonSlot | BotSeat]
    created: float = field(default_factory=time.time)  # wall clock: kept across restarts
    state: str = "waiting"  # waiting, playing, over (recorded or abandoned), closed (unplayed)
    ended: float = 0.0
    recorded: bool = False
    outcome: str = ""
    rules: Rules = CONTEST  # the contest round's rules when it opened (the point limit is the table's own)
    addresses: set[str] = field(default_factory=set)  # the client addresses its people sat down from
    move_seconds: float = MOVE_SECONDS
    names: list[str] = field(default_factory=list)  # each seat's name at the table (seat_names)

    def people(self) -> list[PersonSlot]:
        return [s for s in self.seats if isinstance(s, PersonSlot)]

    def seat_of(self, person: Person) -> PersonSlot | None:
        for s in self.people():
            if s.person == person:
                return s
        return None

    def free(self) -> int:
        return sum(1 for s in self.people() if s.person is None)

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "limit": self.limit,
            "seats": [
                {"kind": "person", "name": s.name if s.person is not None else None}
                if isinstance(s, PersonSlot)
                else {"kind": "bot", "name": self.names[i] if i < len(self.names) else s.label}
                for i, s in enumerate(self.seats)
            ],
            "free": self.free(),
            "record": f"/tables/{self.id}/game" if self.recorded else None,
            "outcome": self.outcome or None,
        }

    def spec(self) -> dict[str, Any]:
        """The table as the database keeps it (and the worker plays it)."""
        seats: list[dict[str, Any]] = []
        for i, s in enumerate(self.seats):
            name = self.names[i] if i < len(self.names) else ""
            if isinstance(s, PersonSlot):
                seats.append({"kind": "person", "who": list(s.person) if s.person else None, "name": s.name})
            else:
                seats.append(
                    {"kind": "bot", "submission": s.submission, "bot": s.bot, "version": s.version, "label": s.label,
                     "name": name}
                )  # fmt: skip
        return {
            "owner": list(self.owner), "limit": self.limit, "rules": self.rules.to_dict(), "seats": seats,
            "addresses": sorted(self.addresses), "move_seconds": self.move_seconds,
        }  # fmt: skip

    @classmethod
    def from_spec(cls, key: str, spec: dict[str, Any], state: str, created: float) -> NetworkTable:
        """A table the database kept (the server restarted). :raises (KeyError, TypeError, ValueError): a bad row."""
        seats: list[PersonSlot | BotSeat] = []
        names = []
        for s in spec["seats"]:
            who = s.get("who")
            if s["kind"] == "person":
                seats.append(PersonSlot((str(who[0]), who[1]) if who else None, str(s.get("name", ""))))
            else:
                seats.append(BotSeat(int(s["submission"]), str(s["bot"]), int(s.get("version", 0))))
            names.append(str(s.get("name", "")))
        owner = spec["owner"]
        return cls(
            key, (str(owner[0]), owner[1]), int(spec["limit"]), seats, created, state,
            rules=Rules.from_dict(spec["rules"]), addresses=set(map(str, spec.get("addresses", []))),
            move_seconds=float(spec.get("move_seconds", MOVE_SECONDS)), names=names,
        )  # fmt: skip


class Hub:
    """The server's tables: who sits where, and the relay between their people and the tables worker."""

    def __init__(
        self,
        folder: Path,
        move_seconds: float = MOVE_SECONDS,
        max_tables: int = MAX_TABLES,
        per_address: int = TABLES_PER_ADDRESS,
    ) -> None:
        self.folder = folder
        self.move_seconds = move_seconds
        self.max_tables = max_tables
        self.per_address = per_address
        self.tables: dict[str, NetworkTable] = {}
        self.lock = threading.Lock()
        self.link: IO[bytes] | None = None  # the tables worker's stdin
        self.link_lock = threading.Lock()

    # -- the tables worker -----------------------------------------------------------------------

    def load(self) -> None:
        """The open tables the database kept (after a restart): their games resume in the worker."""
        db = store.open_db(self.folder)
        try:
            kept = tablestore.live(db)
        finally:
            db.close()
        with self.lock:
            for key, spec, state, created in kept:
                try:
                    table = NetworkTable.from_spec(key, spec, state, created)
                except (KeyError, TypeError, ValueError, IndexError):
                    continue
                self.tables.setdefault(key, table)
                if state != "playing":
                    self._waiting(table)
                for s in table.people():
                    if state == "playing":
                        s.show_state(phase="busy", resuming=True, messages=[RESUMING])

    def attach(self, proc: subprocess.Popen[bytes]) -> None:
        """A tables worker the supervisor started: its stdin takes actions, its stdout is read here."""
        assert proc.stdin is not None and proc.stdout is not None
        with self.link_lock:
            self.link = proc.stdin
        threading.Thread(target=self._read, args=(proc.stdout,), name="tables-relay", daemon=True).start()

    def _send(self, message: dict[str, Any]) -> bool:
        with self.link_lock:
            if self.link is None:
                return False
            try:
                self.link.write(json.dumps(message).encode() + b"\n")
                self.link.flush()
            except (OSError, ValueError):
                self.link = None
                return False
        return True

    def _read(self, stream: IO[bytes]) -> None:
        """Relay the worker's lines to the seats until it ends; then its tables wait for the next one."""
        try:
            for line in stream:
                self._relay(line)
        except (OSError, ValueError):
            pass
        with self.lock:
            playing = [t for t in self.tables.values() if t.state == "playing"]
        for t in playing:
            for s in t.people():
                s.amend(phase="busy", puttable=[], can_draw=False, can_finish=False, resuming=True, messages=[RESUMING])

    def _relay(self, line: bytes) -> None:
        head, _, body = line.rstrip(b"\n").partition(b"\t")
        try:
            header = json.loads(head)
        except ValueError:
            return
        table = self.tables.get(str(header.get("t"))) if isinstance(header, dict) else None
        if table is None:
            return
        end = header.get("end")
        if isinstance(end, dict):
            table.state, table.ended = "over", time.monotonic()
            table.recorded, table.outcome = bool(end.get("recorded")), str(end.get("outcome", ""))
            return
        seat = header.get("s")
        slot = table.seats[seat] if isinstance(seat, int) and 0 <= seat < len(table.seats) else None
        if not isinstance(slot, PersonSlot):
            return
        if "error" in header:
            slot.refuse(str(header["error"]))
        elif body:
            slot.show(str(header.get("phase")), body.decode("utf-8", "replace"))

    def act(self, table: NetworkTable, slot: PersonSlot, action: Any) -> None:
        """Pass a person's action to the worker. :raises BadAction: not an action, or not now."""
        checked = check_action(action)  # its shape first, then whether it may come now
        if checked["action"] != "leave" and (slot.phase != "move" or table.state != "playing"):
            raise BadAction("it is not your move")
        if not self._send({"op": "act", "t": table.id, "s": table.seats.index(slot), "a": checked}):
            raise BadAction("the table is resuming: try again in a moment")

    # -- tables ----------------------------------------------------------------------------------

    def _tidy(self) -> None:
        now, wall = time.monotonic(), time.time()
        for key, t in list(self.tables.items()):
            if t.state == "waiting" and wall - t.created > WAIT_SECONDS:
                t.state, t.ended = "closed", now
                self._forget(key)
                for s in t.people():
                    s.show_state(phase="closed", result=None, messages=["Nobody came: the table is closed."])
            if t.state in ("over", "closed") and now - t.ended > KEEP_SECONDS:
                del self.tables[key]

    def _forget(self, key: str) -> None:
        try:
            db = store.open_db(self.folder)
            try:
                tablestore.drop_table(db, key)
            finally:
                db.close()
        except Exception:  # noqa: BLE001 - a table closed unplayed is forgotten at the next start otherwise
            pass

    def _keep(self, table: NetworkTable) -> None:
        """Write the table's seating and state to the database. :raises TableError: 503, it cannot."""
        try:
            db = store.open_db(self.folder)
            try:
                tablestore.put_table(db, table.id, table.spec(), table.state, table.created)
            finally:
                db.close()
        except Exception as exc:  # noqa: BLE001 - the request is refused; nothing half-kept
            raise TableError(503, "the contest database is busy; try again") from exc

    def _busy(self, person: Person) -> int:
        return sum(1 for t in self.tables.values() if t.state in ("waiting", "playing") and t.seat_of(person))

    def _check_caps(self, person: Person, address: str, table: NetworkTable | None = None) -> None:
        """:raises TableError: 429, ``person`` or ``address`` at their open tables already (joining a
        table the address sits at already takes no new place of the address)."""
        if self._busy(person) >= TABLES_PER_PERSON:
            raise TableError(429, f"you are at {TABLES_PER_PERSON} open tables already; finish one first")
        if table is not None and address in table.addresses:
            return
        held = sum(1 for t in self.tables.values() if t.state in ("waiting", "playing") and address in t.addresses)
        if held >= self.per_address:
            raise TableError(429, f"this address sits at {self.per_address} open tables already; finish one first")

    def get(self, key: str) -> NetworkTable:
        with self.lock:
            self._tidy()
            table = self.tables.get(key)
        if table is None:
            raise TableError(404, "no such table")
        return table

    def listing(self) -> list[dict[str, Any]]:
        with self.lock:
            self._tidy()
            return [t.summary() for t in self.tables.values() if t.state in ("waiting", "playing")]

    def open(
        self,
        owner: Person,
        name: str,
        people: int,
        bots: list[BotSeat],
        limit: int,
        rules: Rules = CONTEST,
        address: str = "?",
    ) -> NetworkTable:
        """A new table with ``owner`` (asking from the client ``address``) at seat 0.

        :raises TableError: a limit, or a bad seating."""
        if not MIN_SEATS <= people + len(bots) <= MAX_SEATS or people < 1:
            raise TableError(400, f"a table seats {MIN_SEATS} to {MAX_SEATS}, at least one of them a person")
        if not MIN_LIMIT <= limit <= rules.limit:
            raise TableError(400, f"the point limit (R2.3) is {MIN_LIMIT} to {rules.limit}")
        with self.lock:
            self._tidy()
            if sum(1 for t in self.tables.values() if t.state in ("waiting", "playing")) >= self.max_tables:
                raise TableError(429, f"the server has {self.max_tables} tables open; try again later")
            self._check_caps(owner, address)
            seats: list[PersonSlot | BotSeat] = [PersonSlot(owner, name)]
            seats += [PersonSlot(None, "") for _ in range(people - 1)]
            seats += bots
            table = NetworkTable(secrets.token_urlsafe(9), owner, limit, seats, rules=rules, addresses={address})
            table.move_seconds = self.move_seconds
            self._name(table)
            self._keep(table)
            self.tables[table.id] = table
        self._maybe_start(table)
        return table

    def join(self, key: str, person: Person, name: str, address: str = "?") -> NetworkTable:
        """Take a free person's seat (asking from the client ``address``).

        :raises TableError: no such table, full, started, a limit."""
        table = self.get(key)
        with self.lock:
            if table.seat_of(person) is not None:
                return table
            if table.state != "waiting" or table.free() == 0:
                raise TableError(409, "this table has no free seat")
            self._check_caps(person, address, table)
            seat = next(s for s in table.people() if s.person is None)
            seat.person, seat.name = person, name
            table.addresses.add(address)
            self._name(table)
            try:
                self._keep(table)
            except TableError:
                seat.person, seat.name = None, ""
                raise
        self._maybe_start(table)
        return table

    @staticmethod
    def _name(table: NetworkTable) -> None:
        """One name a seat (:func:`seat_names`) over the seats taken; a person's seat shows it too."""
        taken = [s for s in table.seats if not isinstance(s, PersonSlot) or s.person is not None]
        names = seat_names([s.label if isinstance(s, BotSeat) else s.name for s in taken])
        unique = dict(zip(map(id, taken), names, strict=True))
        table.names = [unique.get(id(s), "") for s in table.seats]
        for s in table.people():
            if s.person is not None:
                s.name = unique[id(s)]

    def _waiting(self, table: NetworkTable) -> None:
        waiting = f"Waiting for people: {len(table.people()) - table.free()} of {len(table.people())} here."
        for s in table.people():
            if s.person is not None:
                s.show_state(phase="waiting", messages=[waiting])

    def _maybe_start(self, table: NetworkTable) -> None:
        with self.lock:
            if table.state != "waiting" or table.free():
                self._waiting(table)
                return
            table.state = "playing"
            try:
                self._keep(table)
            except TableError:
                table.state = "waiting"
                raise
            for s in table.people():
                s.show_state(phase="busy", messages=["Everyone is here: the game starts."])
        self._send({"op": "start", "t": table.id})

    def close_all(self) -> None:
        """The server is stopping: the worker stops with it (its tables resume at the next start)."""
        with self.link_lock:
            self.link = None
