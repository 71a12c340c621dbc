"""Tables over the network: people play the ladder's bots, and each other, at the server.

A signed-in person (an author, the organiser, or a guest of the organiser's link) opens a
table: seats for people (the opener sits at seat 0; others join by the table's link) and
seats for bots chosen among the ladder's active, checked versions. The game starts once
every person's seat is taken. It runs in a thread of the server process (the referee and
the people's seats; the referee's work between moves is small), seated as every game is
(:class:`~arena.seats.seating.Seating`, its deal seed and bot key from a fresh secret seed in
their separate domains); each bot plays in its own sandbox exactly as on the ladder
(:func:`arena.seats.factories.make_factory` with ``trusted=False``), never in the server's process.

A person's seat is the browser seat of ``arena play --web`` (:class:`~arena.web.seat.WebHumanPlayer`:
the same rules, refusals and page), its state sent over a websocket: the seat's R10 view
only (the public history and the seat's own hand, as a bot's ``turn`` has it). A person
has :data:`MOVE_SECONDS` a move; past it the referee's fallback moves for the seat and the
seat is charged a ``timeout`` fault, as a bot past its limit is (three faults, or leaving,
retire the seat: the fallback plays it to the end), so no table waits for ever. A finished
game is recorded in ``table_games`` (:mod:`arena.server.store.table_games`), never in the ladder's ratings.
"""

from __future__ import annotations

import asyncio
import math
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...botapi.turn import Turn
from ...game.events import FaultKind
from ...game.referee import BotFault
from ...game.rules import CONTEST, Rules
from ...game.seeds import fresh_seed, game_seeds
from ...playing.human import HumanLeft
from ...seats.contract import InProcessFactory, SeatFactory
from ...seats.seating import Chair, Seating
from ...trust.text import storable
from ...web.seat import BadAction, SeatState, WebHumanPlayer, check_action
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


class TableError(Exception):
    """A request about a table that cannot be done; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class MoveTimeout(Exception):
    """A person took longer than the move limit."""


class TableClosed(HumanLeft):
    """The server is stopping: the game ends unrecorded."""


class PersonSeat(SeatState):
    """A person's seat: the browser seat's state, with watchers (websockets) woken on each change,
    a move deadline, and actions refused when it is not the seat's move."""

    def __init__(self, person: Person | None, name: str) -> None:
        super().__init__()
        self.person = person
        self.name = name
        self.deadline = math.inf
        self.closed = False
        self.connection = 0  # the newest websocket's number: an older one stops
        self.watchers: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}

    def publish(self, **changes: Any) -> None:
        super().publish(**changes)
        for loop, event in list(self.watchers.values()):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop is gone (the server stopping)
                pass

    def send(self, action: dict[str, Any]) -> None:
        checked = check_action(action)  # its shape first, then whether it may come now
        with self.cond:
            moving = self.state.get("phase") == "move"
        if not moving:
            raise BadAction("it is not your move")
        if self.actions.qsize() >= 2:
            raise BadAction("one action at a time: wait for the table's answer")
        self.actions.put(checked)

    def next_action(self, stop: Any = None) -> dict[str, Any]:
        while True:
            if self.closed:
                raise TableClosed("the server stopped the table")
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise MoveTimeout
            try:
                return self.actions.get(timeout=min(0.25, left))
            except queue.Empty:
                continue


class TablePerson(WebHumanPlayer):
    """The browser seat at a network table: a move limit, and leaving retires the seat."""

    def __init__(self, seat: int, shared: PersonSeat, move_seconds: float) -> None:
        super().__init__(seat, shared)
        self.name = shared.name
        self.person_seat = shared
        self.move_seconds = move_seconds

    def move(self, turn: Turn) -> None:
        shared = self.person_seat
        while not shared.actions.empty():  # nothing sent before this move counts
            shared.actions.get_nowait()
        shared.deadline = time.monotonic() + self.move_seconds
        try:
            super().move(turn)
        except MoveTimeout:
            self.lines.append(f"No move in {self.move_seconds:g} s: the fallback moved for you (a timeout fault).")
            shared.publish(phase="busy", puttable=[], can_draw=False, can_finish=False, messages=list(self.lines))
            raise BotFault(FaultKind.TIMEOUT, f"no move in {self.move_seconds:g} s") from None
        except TableClosed:
            raise
        except HumanLeft:
            self.lines.append("You left the table: the fallback plays your seat to the end.")
            shared.publish(phase="busy", puttable=[], can_draw=False, can_finish=False, messages=list(self.lines))
            raise BotFault(FaultKind.TIMEOUT, "the person left the table", retire=True) from None
        finally:
            shared.deadline = math.inf


@dataclass
class BotSeat:
    submission: int
    bot: str
    source: bytes
    version: int = 0
    #: A program's built files, from the build cache (the table never builds).
    built: tuple[tuple[str, bytes], ...] | None = None

    @property
    def label(self) -> str:
        """``annbot v2``, as the ladder names it (:func:`..store.versions.player`)."""
        return versions.player(self.bot, self.version) if self.version else self.bot


@dataclass
class Table:
    id: str
    owner: Person
    limit: int
    seats: list[PersonSeat | BotSeat]
    created: float = field(default_factory=time.monotonic)
    state: str = "waiting"  # waiting, playing, over (recorded or failed), closed (unplayed)
    ended: float = 0.0
    recorded: bool = False
    thread: threading.Thread | None = None
    rules: Rules = CONTEST  # the contest round's rules when it opened (the point limit is the table's own)
    addresses: set[str] = field(default_factory=set)  # the client addresses its people sat down from

    def people(self) -> list[PersonSeat]:
        return [s for s in self.seats if isinstance(s, PersonSeat)]

    def seat_of(self, person: Person) -> PersonSeat | None:
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
                if isinstance(s, PersonSeat)
                else {"kind": "bot", "name": s.label}
                for s in self.seats
            ],
            "free": self.free(),
            "record": f"/tables/{self.id}/game" if self.recorded else None,
        }


class Hub:
    """The server's tables (in memory: a restart ends the games in progress unrecorded)."""

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
        self.tables: dict[str, Table] = {}
        self.lock = threading.Lock()

    def _tidy(self) -> None:
        now = time.monotonic()
        for key, t in list(self.tables.items()):
            if t.state == "waiting" and now - t.created > WAIT_SECONDS:
                t.state, t.ended = "closed", now
                for s in t.people():
                    s.publish(phase="closed", result=None, messages=["Nobody came: the table is closed."])
            if t.state in ("over", "closed") and now - t.ended > KEEP_SECONDS:
                del self.tables[key]

    def _busy(self, person: Person) -> int:
        return sum(1 for t in self.tables.values() if t.state in ("waiting", "playing") and t.seat_of(person))

    def _check_caps(self, person: Person, address: str, table: Table | None = None) -> None:
        """:raises TableError: 429, ``person`` or ``address`` at their open tables already (joining a
        table the address sits at already takes no new place of the address)."""
        if self._busy(person) >= TABLES_PER_PERSON:
            raise TableError(429, f"you are at {TABLES_PER_PERSON} open tables already; finish one first")
        if table is not None and address in table.addresses:
            return
        held = sum(1 for t in self.tables.values() if t.state in ("waiting", "playing") and address in t.addresses)
        if held >= self.per_address:
            raise TableError(429, f"this address sits at {self.per_address} open tables already; finish one first")

    def get(self, key: str) -> Table:
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
    ) -> Table:
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
            seats: list[PersonSeat | BotSeat] = [PersonSeat(owner, name)]
            seats += [PersonSeat(None, "") for _ in range(people - 1)]
            seats += bots
            table = Table(secrets.token_urlsafe(9), owner, limit, seats, rules=rules, addresses={address})
            self.tables[table.id] = table
        self._maybe_start(table)
        return table

    def join(self, key: str, person: Person, name: str, address: str = "?") -> Table:
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
        self._maybe_start(table)
        return table

    def _maybe_start(self, table: Table) -> None:
        with self.lock:
            if table.state != "waiting" or table.free():
                waiting = f"Waiting for people: {len(table.people()) - table.free()} of {len(table.people())} here."
                for s in table.people():
                    if s.person is not None:
                        s.publish(phase="waiting", messages=[waiting])
                return
            table.state = "playing"
        table.thread = threading.Thread(target=self._play, args=(table,), name=f"table-{table.id}", daemon=True)
        table.thread.start()

    def _play(self, table: Table) -> None:
        try:
            self._game(table)
        except Exception as exc:  # noqa: BLE001 - a table that fails ends; the server and other tables go on
            table.state, table.ended = "over", time.monotonic()
            for s in table.people():
                s.publish(phase="closed", result=None, messages=[f"The table failed: {storable(str(exc))[:200]}"])

    def _seat_factory(self, spec: PersonSeat | BotSeat) -> SeatFactory:
        """A person's browser seat, or a bot's sandboxed factory (an upload: never trusted)."""
        from ...seats.factories import make_factory
        from ..contest.uploads import stored_bot

        if isinstance(spec, PersonSeat):
            return InProcessFactory(spec.name, lambda _key, seat: TablePerson(seat, spec, self.move_seconds))
        return make_factory(replace(stored_bot(spec.bot, spec.source), built=spec.built), trusted=False)

    def _game(self, table: Table) -> None:
        from ..store import database as store
        from ..store import table_games as tablestore

        names = [s.name if isinstance(s, PersonSeat) else s.label for s in table.seats]
        # A fresh secret seed a game: the deal and the bots' seeds in their separate domains.
        seeds = game_seeds(fresh_seed(), "table", (table.id,), (table.id,))
        seating = Seating(
            lambda seat: self._seat_factory(table.seats[seat]), rules=table.rules.replace(limit=table.limit)
        )
        try:
            chairs = [Chair(seat, name, name) for seat, name in enumerate(names)]
            outcome = seating.play(chairs, seeds, f"t-{table.id}")
        except TableClosed:
            table.state, table.ended = "over", time.monotonic()
            return
        finally:
            seating.close()
        seats = [
            {"kind": "person", "who": list(s.person or ()), "name": s.name}
            if isinstance(s, PersonSeat)
            else {"kind": "bot", "submission": s.submission, "name": s.label}
            for s in table.seats
        ]
        faults = [(f.seat, f.kind.value, storable(f.detail), f.round) for f in outcome.faults]
        result = outcome.result
        try:
            db = store.open_db(self.folder)
            try:
                table.recorded = tablestore.record(
                    db, table.id, seats, list(result.places), list(result.scores), faults, outcome.log
                )
            finally:
                db.close()
        except Exception:  # noqa: BLE001 - a database that fails leaves the game unrecorded, said on the page
            table.recorded = False
        table.state, table.ended = "over", time.monotonic()
        done = {"places": list(result.places), "scores": list(result.scores), "rounds": result.rounds}
        for s in table.people():
            s.publish(phase="closed", result=done, record=f"/tables/{table.id}/game" if table.recorded else None)

    def close_all(self, wait: float = 5.0) -> None:
        """The server is stopping: every person's seat is closed (its game ends unrecorded)."""
        with self.lock:
            tables = list(self.tables.values())
        for t in tables:
            for s in t.people():
                s.closed = True
        deadline = time.monotonic() + wait
        for t in tables:
            if t.thread is not None:
                t.thread.join(timeout=max(0.0, deadline - time.monotonic()))
