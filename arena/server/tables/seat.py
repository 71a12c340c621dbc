"""A person's seat at a network table, as the tables worker plays it (:mod:`.worker`).

The seat is the browser seat of ``arena play --web`` (:class:`~arena.web.seat.WebHumanPlayer`: the
same rules, refusals and page), its state sent to the server's process on every change (the seat's
R10 view only: the public history and the seat's own hand, as a bot's ``turn`` has it) and its
actions coming from there. A person has the table's move limit a move; past it the referee's
fallback moves for the seat and the seat is charged a ``timeout`` fault, as a bot past its limit is
(three faults, or leaving, retire the seat: the fallback plays it to the end), so no table waits
for ever.

Every action the seat takes (a timeout and leaving too) is kept by its table before the referee
acts on it (:meth:`Moves.keep`); a table resumed after a restart hands the kept ones back in
order (:meth:`Moves.recorded`) and the seat takes them without waiting, so the game replays to
where it was.
"""

from __future__ import annotations

import math
import queue
import time
from collections.abc import Callable
from typing import Any, Protocol

from ...botapi.turn import Turn
from ...game.events import FaultKind
from ...game.referee import BotFault
from ...playing.human import HumanLeft
from ...web.seat import BadAction, SeatState, WebHumanPlayer, check_action

#: Why a table's game stops before its end: the worker is stopping (the game resumes with the
#: next one), another worker took the table over, or a replay did not reproduce what was played.
CLOSED, TAKEN, DIVERGED = "closed", "taken", "diverged"


class MoveTimeout(Exception):
    """A person took longer than the move limit (or, with a detail, may not move for another reason)."""


class TableStopped(HumanLeft):
    """The table's game stops where it is (``why``: :data:`CLOSED`, :data:`TAKEN` or :data:`DIVERGED`);
    a ``KeyboardInterrupt`` as the terminal seat's leaving is, so no referee takes it for a fault."""

    def __init__(self, why: str, detail: str = "") -> None:
        super().__init__(detail or why)
        self.why = why
        self.detail = detail


class Moves(Protocol):
    """What a person's seat asks its table for: the kept actions while it replays, and keeping a new one."""

    replaying: bool

    def recorded(self, seat: int) -> dict[str, Any] | None: ...
    def keep(self, seat: int, action: dict[str, Any]) -> None: ...
    def full(self) -> bool: ...


class PersonSeat(SeatState):
    """A person's seat in the worker: the browser seat's state, sent (``send(seat, state)``) on each
    change once the table is no longer replaying; actions offered from the server's process."""

    def __init__(self, table: Moves, seat: int, name: str, send: Callable[[int, dict[str, Any]], None]) -> None:
        super().__init__()
        self.table = table
        self.seat = seat
        self.name = name
        self.send_state = send
        self.deadline = math.inf
        self.closed = False  # the worker is stopping
        self.left = False  # the person left (from any moment: taken at their next move)

    def publish(self, **changes: Any) -> None:
        super().publish(**changes)
        if not self.table.replaying:
            self.resend()

    def resend(self) -> None:
        """Send the newest state to the server (after a replay, the state it reached)."""
        with self.cond:
            state = dict(self.state)
        self.send_state(self.seat, state)

    def offer(self, action: Any) -> str | None:
        """Take an action from the page; the refusal's text, or None. Leaving is taken at any moment
        (at the seat's next move, or now if it is asked); any other action only when asked."""
        try:
            checked = check_action(action)  # its shape first, then whether it may come now
        except BadAction as exc:
            return str(exc)
        if checked["action"] == "leave":
            if not self.left:
                self.left = True
                self.actions.put(checked)
                self.publish(left=True)
            return None
        with self.cond:
            moving = self.state.get("phase") == "move"
        if not moving or self.left:
            return "it is not your move"
        if self.actions.qsize() >= 2:
            return "one action at a time: wait for the table's answer"
        self.actions.put(checked)
        return None

    def next_action(self, stop: Any = None) -> dict[str, Any]:
        recorded = self.table.recorded(self.seat)
        if recorded is not None:  # a resumed game: what the person did, at once
            if recorded.get("action") == "timeout":
                raise MoveTimeout(str(recorded.get("detail", "")))
            return recorded
        while True:
            if self.closed:
                raise TableStopped(CLOSED, "the tables worker stopped")
            if self.left:
                action = {"action": "leave"}
            else:
                wait = self.deadline - time.monotonic()
                if wait <= 0:
                    self.table.keep(self.seat, {"action": "timeout"})
                    raise MoveTimeout
                try:
                    action = self.actions.get(timeout=min(0.25, wait))
                except queue.Empty:
                    continue
                if self.table.full():  # past the actions a table keeps: this move times out
                    detail = "more actions than a table keeps"
                    self.table.keep(self.seat, {"action": "timeout", "detail": detail})
                    raise MoveTimeout(detail)
            self.table.keep(self.seat, action)  # before the referee acts on it
            return action


class TablePerson(WebHumanPlayer):
    """The browser seat at a network table: a move limit, and leaving retires the seat."""

    def __init__(self, seat: int, shared: PersonSeat, move_seconds: float) -> None:
        super().__init__(seat, shared)
        self.name = shared.name
        self.person_seat = shared
        self.move_seconds = move_seconds

    def move(self, turn: Turn) -> None:
        shared = self.person_seat
        while not shared.actions.empty():  # nothing sent before this move counts (but leaving)
            shared.actions.get_nowait()
        shared.deadline = time.monotonic() + self.move_seconds
        try:
            super().move(turn)
        except MoveTimeout as exc:
            why = str(exc) or f"no move in {self.move_seconds:g} s"
            self.lines.append(f"{why[:1].upper()}{why[1:]}: the fallback moved for you (a timeout fault).")
            shared.publish(phase="busy", puttable=[], can_draw=False, can_finish=False, messages=list(self.lines))
            raise BotFault(FaultKind.TIMEOUT, why) from None
        except TableStopped:
            raise
        except HumanLeft:
            self.lines.append("You left the table: the fallback plays your seat to the end of the game.")
            shared.publish(
                phase="busy", puttable=[], can_draw=False, can_finish=False, left=True, messages=list(self.lines)
            )
            raise BotFault(FaultKind.TIMEOUT, "the person left the table", retire=True) from None
        finally:
            shared.deadline = math.inf
