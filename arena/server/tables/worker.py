"""The tables worker: every network table's game, played outside the server's process.

``python -m arena.server.workers.processes tables DIR`` (started, and started again when it dies, by
the server's :class:`~arena.server.workers.supervisor.Supervisor`) plays each started table in a
thread of its own, seated as every game is (:class:`~arena.seats.seating.Seating`): the bots in
their sandboxes, made exactly as the ladder makes them, and the people's browser seats
(:mod:`.seat`). So all of a table's referee work, the bots' moves, the forward-model requests the
referee answers for programs and the fallback, is this process's CPU, never the server's; the
server's process only relays (:mod:`.hub`).

Its wire to the server is a pipe each way, one line a message. From the server: ``{"op": "start",
"t": KEY}`` (a table's people are all seated: play it) and ``{"op": "act", "t": KEY, "s": SEAT,
"a": ACTION}``. To the server: ``HEADER\\tSTATE`` lines, the header a JSON object ``{"t", "s",
"phase"}`` and the state the seat's JSON as the page reads it; ``{"t", "s", "error"}`` (an action
refused); ``{"t", "end": {"outcome", "recorded"}}`` (the table's game is over).

A table's state is the contest database's (:mod:`arena.server.store.table_games`): its seating,
its secret seed, and each person's action with the game's events up to it, kept before the
referee acts on it. A worker that starts (after a restart of the server, a ``kill -9`` included,
or of itself) takes every started table and replays it: the same seeds, the bots from the start
(deterministic given their seeds), each person's kept actions handed back at once; the events the
replay makes are checked against the kept ones at every action. The game then goes on where it
was. A replay that does not make the same events (a bot that is not deterministic, a move limit
met once but not again) stops there, and the game is recorded as **abandoned** with what was played
(docs/RULINGS.md 130).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import IO, Any

from ...game.referee import GameOutcome
from ...game.rules import CONTEST, Rules
from ...game.seeds import fresh_seed, game_seeds
from ...game.visibility import game_seen_by
from ...seats.contract import InProcessFactory, SeatFactory
from ...seats.seating import Chair, Seating
from ...trust.text import storable
from ..store import database as store
from ..store import table_games as tablestore
from .seat import DIVERGED, TAKEN, PersonSeat, TablePerson, TableStopped

#: Times a started table is taken by a worker (its first start included) before it is abandoned
#: rather than replayed again (a table whose replay kills its worker must not do so for ever).
MAX_TAKES = 6
#: People's actions a table keeps at most (refusals included: a game needs a few hundred). Past it,
#: a person's every move times out: three retire the seat, so no page can grow a table without end.
MAX_KEPT = 3000
#: Longest line the worker reads from the server.
MAX_LINE = 64 * 1024


class Outbox:
    """The worker's lines to the server, one writer at a time; a pipe that broke (the server is
    gone) is remembered, and nothing more is written."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.broken = threading.Event()

    def line(self, header: dict[str, Any], state: dict[str, Any] | None = None) -> None:
        data = json.dumps(header, separators=(",", ":")).encode()
        if state is not None:
            data += b"\t" + json.dumps(state, separators=(",", ":")).encode()
        with self.lock:
            if self.broken.is_set():
                return
            try:
                self.stream.write(data + b"\n")
                self.stream.flush()
            except (OSError, ValueError):
                self.broken.set()


def normal(events: list[dict[str, Any]]) -> list[Any]:
    """Events as they read back from the database (tuples as lists, keys as text)."""
    return list(json.loads(json.dumps(events)))


class TableRun:
    """One started table in the worker: its seats, its game's events as they are made, and the kept
    actions a resumed game replays (:class:`~.seat.Moves`)."""

    def __init__(self, worker: TablesWorker, key: str, claim: tablestore.Claim) -> None:
        self.worker = worker
        self.key = key
        self.spec = claim.spec
        self.seed = claim.seed
        self.takes = claim.resumes + 1
        self.moves = claim.moves
        self.next = 0  # the next kept action to hand back
        self.replaying = bool(self.moves)
        self.log: list[dict[str, Any]] = []
        self.kept = 0  # events of the log kept with the actions so far
        self.added = 0  # actions this worker kept
        self.db: sqlite3.Connection | None = None
        seats = self.spec.get("seats")
        self.seat_specs: list[dict[str, Any]] = [s for s in seats or [] if isinstance(s, dict)]
        self.people: dict[int, PersonSeat] = {
            s: PersonSeat(self, s, str(spec.get("name", "")), self._send)
            for s, spec in enumerate(self.seat_specs)
            if spec.get("kind") == "person"
        }
        self.thread = threading.Thread(target=self.run, name=f"table-{key}", daemon=True)

    # -- the seats' Moves ----------------------------------------------------------------------

    def recorded(self, seat: int) -> dict[str, Any] | None:
        if not self.replaying:
            return None
        seat_was, action, events = self.moves[self.next]
        if seat_was != seat or normal(self.log[self.kept :]) != events:
            raise TableStopped(DIVERGED, "the replay after the restart did not make the same game")
        self.next += 1
        self.kept = len(self.log)
        if self.next == len(self.moves):
            self._caught_up(seat)
        return action

    def full(self) -> bool:
        return len(self.moves) + self.added >= MAX_KEPT

    def keep(self, seat: int, action: dict[str, Any]) -> None:
        assert self.db is not None
        if not tablestore.keep_move(self.db, self.key, self.worker.token, seat, action, self.log[self.kept :]):
            raise TableStopped(TAKEN)
        self.kept = len(self.log)
        self.added += 1

    def _caught_up(self, acting: int) -> None:
        """The replay has handed back every kept action (the last one to ``acting``): from now on the
        seats' states go to the server, each one's newest now, but for the acting seat's, whose
        question is being answered (its next state follows at once)."""
        self.replaying = False
        for seat, person in self.people.items():
            if seat != acting:
                person.resend()

    def _send(self, seat: int, state: dict[str, Any]) -> None:
        self.worker.out.line({"t": self.key, "s": seat, "phase": state.get("phase")}, state)

    # -- the game ------------------------------------------------------------------------------

    def _factory(self, seat: int) -> SeatFactory:
        """A person's browser seat, or a bot's sandboxed factory (an upload: never trusted)."""
        from ...errors import BotLoadError
        from ...seats.factories import make_factory
        from ..contest.building import NotReady, playable

        spec = self.seat_specs[seat]
        if seat in self.people:
            person, limit = self.people[seat], float(self.spec.get("move_seconds", 120.0))
            return InProcessFactory(person.name, lambda _key, s: TablePerson(s, person, limit))
        assert self.db is not None
        row = store.submission(self.db, int(spec.get("submission", 0)))
        if row is None:
            raise BotLoadError("this version is no longer stored", path=str(spec.get("bot")))
        try:  # a program's build from the build queue's cache: a table never builds
            bot = playable(self.db, int(row["id"]), str(row["bot"]), store.source_bytes(row["source"]))
        except NotReady as exc:  # let go of since the table opened: the seat plays as a crash, said why
            raise BotLoadError(f"its build is not ready ({exc})", path=str(row["bot"])) from None
        return make_factory(bot, trusted=False)

    def _rules(self) -> Rules:
        try:
            rules = Rules.from_dict(self.spec["rules"])
        except (KeyError, TypeError, ValueError):
            rules = CONTEST
        return rules.replace(limit=int(self.spec.get("limit", rules.limit)))

    def _play(self) -> GameOutcome:
        assert self.db is not None
        if self.seed is None:  # a fresh secret seed a game: the deal and the bots' seeds in their domains
            self.seed = fresh_seed()
            if not tablestore.set_seed(self.db, self.key, self.worker.token, self.seed):
                raise TableStopped(TAKEN)
        seeds = game_seeds(self.seed, "table", (self.key,), (self.key,))
        seating = Seating(self._factory, rules=self._rules(), on_event=self.log.append)
        try:
            chairs = [
                Chair(seat, str(s.get("label") or s.get("name", "")), str(s.get("name", "")))
                for seat, s in enumerate(self.seat_specs)
            ]
            outcome = seating.play(chairs, seeds, f"t-{self.key}")
        finally:
            seating.close()
        if self.replaying:  # the game ended before every kept action was handed back
            raise TableStopped(DIVERGED, "the replay after the restart did not make the same game")
        return outcome

    def run(self) -> None:
        try:
            self.db = store.open_db(self.worker.folder)
        except store.ContestError:
            return
        try:
            if self.takes > MAX_TAKES:
                self._abandon(f"the game was resumed {MAX_TAKES - 1} times without ending", self._kept_log())
                return
            try:
                outcome = self._play()
            except TableStopped as stop:
                if stop.why == DIVERGED:
                    self._abandon(stop.detail, self._kept_log())
                return  # closed or taken: the table is the next worker's, or another's already
            except Exception as exc:  # noqa: BLE001 - a table that fails ends; the worker and other tables go on
                log = self._kept_log() if self.replaying else normal(self.log)
                self._abandon(f"the table failed: {storable(str(exc))[:200]}", log)
                return
            self._end(outcome)
        finally:
            self.worker.done(self.key)
            self.db.close()

    def _seats(self) -> list[dict[str, Any]]:
        return [
            {"kind": "person", "who": s.get("who") or [], "name": s.get("name", "")}
            if s.get("kind") == "person"
            else {"kind": "bot", "submission": s.get("submission"), "name": s.get("name", "")}
            for s in self.seat_specs
        ]

    def _end(self, outcome: GameOutcome) -> None:
        assert self.db is not None
        faults = [(f.seat, f.kind.value, storable(f.detail), f.round) for f in outcome.faults]
        result = outcome.result
        recorded = self._record(list(result.places), list(result.scores), faults, outcome.log, tablestore.FINISHED)
        if recorded is None:
            return
        done = {"places": list(result.places), "scores": list(result.scores), "rounds": result.rounds}
        for person in self.people.values():
            person.publish(phase="closed", result=done, record=f"/tables/{self.key}/game" if recorded else None)
        self.worker.out.line({"t": self.key, "end": {"outcome": tablestore.FINISHED, "recorded": recorded}})

    def _kept_log(self) -> list[dict[str, Any]]:
        """The game's events as kept with the people's actions: what was played before a restart."""
        return [e for _, _, events in self.moves for e in events]

    def _abandon(self, why: str, log: list[dict[str, Any]]) -> None:
        """Record ``log``, what was played, as an abandoned game, and tell the people."""
        scores, faults, round_no = [0] * len(self.seat_specs), [], 0
        for e in log:
            if e.get("event") == "deal":
                round_no = int(e.get("round", round_no + 1))
            elif e.get("event") == "round":
                scores = list(e["scores"])
            elif e.get("event") == "fault":
                faults.append((int(e["seat"]), str(e["kind"]), storable(str(e.get("detail", ""))), round_no))
        recorded = self._record([], scores, faults, log, tablestore.ABANDONED)
        if recorded is None:
            return
        message = f"This game ended before its end: {why}. It is recorded as abandoned, with what was played."
        self.replaying = False
        for seat, person in self.people.items():  # the game as it was played, as the seat saw it (R10)
            person.publish(
                phase="closed", result=None, abandoned=True, messages=[message], events=game_seen_by(log, seat),
                hand=None, record=f"/tables/{self.key}/game" if recorded else None,
            )  # fmt: skip
        self.worker.out.line({"t": self.key, "end": {"outcome": tablestore.ABANDONED, "recorded": recorded}})

    def _record(
        self, places: list[int], scores: list[int], faults: list[Any], log: list[dict[str, Any]], outcome: str
    ) -> bool | None:
        """Record the game; None: another worker holds the table now (it is theirs to record)."""
        assert self.db is not None
        try:
            token = self.worker.token
            if not tablestore.record(self.db, self.key, self._seats(), places, scores, faults, log, outcome, token):
                return None
        except sqlite3.Error:  # a database that fails leaves the game unrecorded, said on the page
            return False
        return True


class TablesWorker:
    """The worker's tables: started when the server says so (and, when the worker starts, every
    table the database has started), fed the people's actions, stopped together."""

    def __init__(self, folder: str | Path, out: Outbox) -> None:
        self.folder = folder
        self.out = out
        self.token = secrets.token_hex(8)  # who holds a table: never reused, unlike a pid
        self.runs: dict[str, TableRun] = {}
        self.lock = threading.Lock()
        self.stopping = False

    def scan(self) -> None:
        """Take and play every started table this worker does not play yet."""
        try:
            db = store.open_db(self.folder)
        except store.ContestError:
            return
        try:
            for key in tablestore.playing(db):
                with self.lock:
                    if self.stopping or key in self.runs:
                        continue
                    claim = tablestore.claim(db, key, self.token)
                    if claim is None:
                        continue
                    run = self.runs[key] = TableRun(self, key, claim)
                run.thread.start()
        except sqlite3.Error:
            pass
        finally:
            db.close()

    def done(self, key: str) -> None:
        with self.lock:
            self.runs.pop(key, None)

    def handle(self, line: bytes) -> None:
        """One message from the server."""
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(msg, dict):
            return
        if msg.get("op") == "start":
            self.scan()
        elif msg.get("op") == "act":
            with self.lock:
                run = self.runs.get(str(msg.get("t")))
            seat = msg.get("s")
            person = run.people.get(seat) if run is not None and isinstance(seat, int) else None
            refusal = "this table is resuming; try again in a moment" if person is None else person.offer(msg.get("a"))
            if refusal is not None:
                self.out.line({"t": msg.get("t"), "s": msg.get("s"), "error": refusal})

    def stop(self, wait: float = 5.0) -> None:
        """Stop every table where it is (their games resume with the next worker)."""
        with self.lock:
            self.stopping = True
            runs = list(self.runs.values())
        for run in runs:
            for person in run.people.values():
                person.closed = True
        deadline = time.monotonic() + wait
        for run in runs:
            run.thread.join(timeout=max(0.0, deadline - time.monotonic()))


def serve(folder: str | Path, inp: int, out: IO[bytes], alive: Any, idle: float = 0.3) -> None:
    """Play the tables of ``folder`` for the server at the other end of the file descriptor ``inp``
    and ``out`` while ``alive()`` and the server's pipe is open; then stop them (they resume with
    the next worker). The pipe is read with ``os.read``: a thread blocked in it holds no lock of
    Python's buffered files, so the process can always end."""
    worker = TablesWorker(folder, Outbox(out))
    closed = threading.Event()

    def read() -> None:
        pending = b""
        try:
            while chunk := os.read(inp, 65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    worker.handle(line)
                if len(pending) > MAX_LINE:  # not a line of the server's: dropped
                    pending = b""
        except OSError:
            pass
        closed.set()

    threading.Thread(target=read, name="tables-reader", daemon=True).start()
    worker.scan()
    looks = 0
    try:
        while alive() and not closed.is_set() and not worker.out.broken.is_set():
            closed.wait(idle)
            looks += 1
            if looks % 10 == 0:  # a start the server sent while no worker was there to read it
                worker.scan()
    finally:
        worker.stop()
