"""The referee's seat for a bot program (:class:`ProgramSeat`, a :class:`~arena.game.referee.RemoteSeat`),
its factory (:class:`ProgramFactory`: stages the bot once, a fresh process per stream or game)
and its stream (:class:`ProgramStream`). Protocol v1: docs/protocol.md. The process, the bank,
the turn's bounds, faults and streams are the base's (:mod:`arena.sandbox.seat`); what is here is
the wire.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
import weakref
from typing import TYPE_CHECKING, Any

from ...botapi.turn import SAY_CHARS, SAYS_PER_MOVE
from ...errors import BotLoadError, IllegalMove
from ...game.cards import Card
from ...game.events import FaultKind
from ...game.referee import BotFault, GameInfo, SeatContext
from ..failures import ProtocolViolation, WorkerError, WorkerTimeout, clean
from ..limits import Limits
from ..seat import ProcessFactory, ProcessSeat, ProcessStream, referee_clock, supervision
from . import wire as jsonwire
from .process import PROGRAM_LAYERS, ProgramProcess, Runtime
from .simulate import REQUESTS, Searcher

if TYPE_CHECKING:
    from ...game.engine import GameResult, RoundResult
    from ...trust.botsource import BotSource


class ProgramSeat(ProcessSeat[ProgramProcess]):
    """One seat of one game, played by a program over protocol v1."""

    process_word = "program"

    def __init__(
        self,
        factory: ProcessFactory[ProgramProcess],
        bot_key: Any,
        seat: int,
        stream: ProcessStream[ProgramProcess] | None = None,
    ) -> None:
        super().__init__(factory, bot_key, seat, stream)
        self.names: tuple[str, ...] = ()
        self.sent = 0
        #: The forward model's requests (docs/protocol.md, "Searching ahead"): their CPU is the seat's.
        self.search = Searcher()
        #: The bytes its process had written to stderr when this game began.
        self.stderr_mark = 0

    def _last_output(self, worker: ProgramProcess) -> None:
        """The game is over: what it wrote to stderr in this game is its author's output."""
        self.output.add(worker.stderr_since(self.stderr_mark))

    def _charged(self) -> float:
        return self.search.game_seconds

    def start_game(self, info: GameInfo) -> None:
        self.names = self.search.names = info.players
        proc = self._take()
        proc.drain()
        self.stderr_mark = proc.stderr_seen  # what an earlier game of its stream wrote is not this game's
        budget = self.limits.load_seconds
        start, cpu0 = proc.begin(budget)
        try:
            proc.send(
                {
                    "type": "start_game",
                    "protocol": jsonwire.VERSION,
                    "game": info.game,
                    "seat": info.seat,
                    "players": list(info.players),
                    "rules": info.rules.to_dict(),
                    "seed": self.seed,
                }
            )
            jsonwire.parse_ready(proc.recv())
        except WorkerError as exc:
            in_time, _ = proc.end(start, cpu0, budget)
            if not in_time or isinstance(exc, WorkerTimeout):
                exc = proc.late(budget, budget, "load limit")
            raise self._fault(exc) from None
        in_time, _ = proc.end(start, cpu0, budget)
        if not in_time:
            raise self._fault(proc.late(budget, budget, "load limit"))

    def _view(self, table: SeatContext) -> dict[str, Any]:
        history = table.history_since(self.sent)
        self.sent += len(history)
        return jsonwire.view(table, table.current_move(), self.names, history)

    def play_move(self) -> None:
        table = self.table
        if table is None:
            raise BotFault(FaultKind.CRASH, "the seat has no context", retire=True)
        proc = self._live()
        self._spent(proc)
        budget = self._budget()
        if proc.pending():
            raise self._fault(ProtocolViolation("a line out of turn"))
        start, cpu0 = proc.begin(budget)
        search = self.search
        search.turn_seconds = 0.0
        self.turn_referee = 0.0  # the referee's CPU on this turn's lines: reading, parsing, applying (not its views)
        said = self.acted = 0
        error: str | None = None
        try:
            proc.send({"type": "move", "view": self._view(table)})
            while True:
                t0 = referee_clock()
                try:
                    action = jsonwire.parse_action(proc.recv())
                    self._count(1)
                    kind = action["action"]
                    if kind in REQUESTS:  # the program's own search: charged as its CPU, not billed
                        left = budget - (proc.cpu() - cpu0) - search.turn_seconds
                        before = search.turn_seconds
                        wall_left, waiting = proc.hold_backstop(), time.monotonic()
                        try:
                            reply = search.answer(table, action, left)
                        finally:
                            spent = search.turn_seconds - before
                            proc.charge(spent, wall_left, time.monotonic() - waiting)
                            t0 += spent
                        proc.send(reply)
                        continue
                    if kind == "say":
                        said += 1
                        if said <= SAYS_PER_MOVE:
                            table.say(clean(action["text"], SAY_CHARS))
                        continue
                    if kind == "error":  # the bot's own code failed: an exception fault, the fallback completes
                        error = action["message"]
                        break
                    try:
                        if kind == "put":
                            card = Card._by_text.get(action["card"]) or Card(action["card"])
                            table.checked_put(card, action.get("suit"))
                            answer: dict[str, Any] = {"type": "ok"}
                        elif kind == "draw":
                            answer = {"type": "ok", "card": table.checked_draw()._text}
                        else:
                            table.checked_finish()
                            break
                    except IllegalMove as exc:
                        proc.send({"type": "error", "rule": exc.rule, "message": clean(str(exc), 300)})
                        continue
                    except ValueError as exc:  # not a card
                        proc.send({"type": "error", "rule": "R1.2", "message": clean(str(exc), 300)})
                        continue
                finally:
                    self.turn_referee += referee_clock() - t0
                    if self.turn_referee > self.limits.referee_turn_seconds:
                        raise self._overload()
                # A put or a draw never ends a move (only a finish does: R8.1, R8.4): answer it, with
                # the view after it (the referee's own work, not billed to the seat).
                answer["view"] = self._view(table)
                proc.send(answer)
        except WorkerError as exc:
            in_time, _ = proc.end(start, cpu0, budget)
            if not in_time or isinstance(exc, WorkerTimeout):
                exc = proc.late(budget, self.limits.move_seconds, "per-move limit")
            raise self._fault(exc) from None
        in_time, took = proc.end(start, cpu0, budget)
        took += search.turn_seconds
        if not in_time or took > budget:
            raise self._fault(proc.late(budget, self.limits.move_seconds, "per-move limit"))
        self.cpu_times.append(took)
        if error is not None:
            raise BotFault(FaultKind.EXCEPTION, clean(error, 300) or "error")

    def _notify(self, message: dict[str, Any]) -> None:
        """A notification: sent, no answer (the program reads it in its next turn)."""
        proc = self.worker
        if proc is None or proc.dead:
            return
        try:
            proc.send(message)
        except WorkerError:
            pass

    def end_round(self, result: RoundResult) -> None:
        self._notify(
            {
                "type": "end_round",
                "round": result.round,
                "winner": result.winner,
                "points": list(result.points),
                "scores": list(result.scores),
                "burned": list(result.burned),
            }
        )

    def end_game(self, result: GameResult) -> None:
        self._notify(
            {
                "type": "end_game",
                "scores": list(result.scores),
                "losers": list(result.losers),
                "places": list(result.places),
                "rounds": result.rounds,
            }
        )


class ProgramStream(ProcessStream[ProgramProcess]):
    """One program process for a sequence of games sharing no deal (replaced after a fatal fault)."""


#: Live factories, whose staged files are removed at exit at the latest.
_stages: weakref.WeakSet[ProgramFactory] = weakref.WeakSet()


@atexit.register
def _remove_stages() -> None:
    for factory in list(_stages):
        factory.close()


class ProgramFactory(ProcessFactory[ProgramProcess]):
    """A bot program as a seat factory: its files staged once (read-only), a process per game or stream."""

    seat_type = ProgramSeat
    stream_type = ProgramStream

    def __init__(self, src: BotSource, runtime: Runtime, files: dict[str, bytes], limits: Limits | None = None) -> None:
        super().__init__(src, limits)
        self.runtime = runtime
        from ...trust.botfolder import safe_relative

        bad = [rel for rel in files if not safe_relative(rel)]
        if bad:  # a bundle's names are checked when read; a build's output is checked here
            raise BotLoadError(f"a file name that is not a plain relative path: {bad[0][:60]!r}", path=src.label)
        self.stage = tempfile.mkdtemp(prefix="arena-program-")
        for rel, data in files.items():
            path = os.path.join(self.stage, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as fh:
                fh.write(data)
            os.chmod(path, 0o555)  # readable and runnable by the program's uid, never writable
        for folder, _dirs, _files in os.walk(self.stage):
            os.chmod(folder, 0o555)
        self.owner = os.getpid()
        _stages.add(self)
        try:
            self._trial()
        except BaseException:
            self.close()
            raise

    def _trial(self) -> None:
        """Start the program once, so a program that cannot start is refused before any game."""
        try:
            proc = self.spawn()
        except WorkerError as exc:
            raise BotLoadError(f"the program did not start: {exc}", path=self.src.label) from None
        self.report = dict(proc.report, supervision=supervision(self.limits))
        proc.kill()

    def spawn(self) -> ProgramProcess:
        return ProgramProcess(self.stage, self.runtime, self.limits)

    def close(self) -> None:
        """Remove the staged files (only in the process that staged them)."""
        if getattr(self, "owner", None) != os.getpid():
            return
        stage, self.stage = self.stage, ""
        if stage:
            for folder, _dirs, _files in os.walk(stage):
                os.chmod(folder, 0o700)
            shutil.rmtree(stage, ignore_errors=True)


__all__ = ["PROGRAM_LAYERS", "ProgramFactory", "ProgramSeat", "ProgramStream"]
