"""The base of every seat played in another process: one jail, a wire per kind of bot.

A Python bot file (:mod:`arena.sandbox.python.seat`, its marshal wire to a forked game process)
and a bot program (:mod:`arena.sandbox.programs.seat`, protocol v1's JSON lines) differ only in
what they say to their process. What they share is here, once (as DMOJ's executors share one
base): the seat's seed and its game's CPU bank, the referee's own CPU clock, getting the game's
process (a fresh one, or its stream's), the turn's bounds, how a failed process becomes a
fault, what the bot wrote for its author (:class:`OwnOutput`), and giving the process back when
the game ends (:class:`ProcessSeat`); the factory that
counts its seats' move times (:class:`ProcessFactory`); the stream that serves one process for
game after game of different deals (:class:`ProcessStream`); and the referee-side layers in
force (:func:`supervision`). The seat contract they keep is :mod:`arena.seats.contract`.
"""

from __future__ import annotations

import gc
import threading
from time import thread_time
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from ..game.events import FaultKind
from ..game.referee import BotFault, GameInfo, SeatContext
from ..game.seeds import derive_seed
from ..seats.contract import DealCheck
from .failures import Overload, ProtocolViolation, WorkerError
from .limits import Limits, cpu_clocks_work

if TYPE_CHECKING:
    from ..game.engine import GameResult, RoundResult
    from ..trust.botsource import BotSource

#: The referee's CPU seconds spent in the garbage collector so far, and when the running collection
#: began: taken off what a seat's turn is billed, since a collection of the referee's own heap can
#: fall in any seat's turn (a full one takes milliseconds).
_gc_seconds = [0.0, 0.0]


def _gc_timer(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_seconds[1] = thread_time()
    else:
        _gc_seconds[0] += thread_time() - _gc_seconds[1]


gc.callbacks.append(_gc_timer)


def referee_clock() -> float:
    """The referee thread's CPU seconds, less its garbage collections."""
    return thread_time() - _gc_seconds[0]


#: Layers the referee itself provides, beside the process's own (:data:`arena.sandbox.jail.harden.LAYERS`).
SUPERVISION: tuple[str, ...] = ("cpu_time", "freeze", "fresh_process")


def supervision(limits: Limits) -> dict[str, str]:
    """The referee-side layers in force for ``limits`` (name -> "active" or why not)."""
    return {
        "cpu_time": "active" if cpu_clocks_work() else "unavailable: cannot read a process's CPU clock",
        "freeze": "active" if limits.freeze else "unavailable: disabled by caller (freeze=False)",
        "fresh_process": "active",
    }


#: Bytes of a bot's own output kept per seat and game (:class:`OwnOutput`): the last ones.
OWN_OUTPUT_BYTES = 4096


class OwnOutput:
    """What a seat's bot wrote for its author in one game: a program's standard error, a Python
    bot's printed text. At most ``limit`` bytes (UTF-8) are kept: the last ones (``last``: an error's
    trace is at the end), from the start of a line where one falls in their first quarter; or the
    first ones (a Python bot's prints: its sandbox keeps the first 4096 characters a game, as its
    record does). :meth:`text` then says how many bytes were not kept. Shown to the bot's author
    and the organiser only (R10's rule for printed output: docs/security/server.md, "A bot's own output")."""

    __slots__ = ("limit", "last", "parts", "size", "dropped", "note")

    def __init__(self, limit: int = OWN_OUTPUT_BYTES, *, last: bool = True) -> None:
        self.limit = limit
        self.last = last
        self.parts: list[bytes] = []
        self.size = 0
        #: Bytes written but not kept.
        self.dropped = 0
        #: A line said after the output (what its sandbox did not keep), outside the limit.
        self.note = ""

    def add(self, text: str | bytes) -> None:
        data = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
        if not self.last:
            room = max(self.limit - self.size, 0)
            self.dropped += max(len(data) - room, 0)
            data = data[:room]
        if not data:
            return
        self.parts.append(data)
        self.size += len(data)
        if self.size > 2 * self.limit:  # amortised: cut only once twice the limit is held
            self._cut()

    def _cut(self) -> None:
        data = b"".join(self.parts)
        if len(data) > self.limit:
            keep = data[-self.limit :]
            newline = keep.find(b"\n", 0, self.limit // 4)
            if newline >= 0:
                keep = keep[newline + 1 :]
            self.dropped += len(data) - len(keep)
            data = keep
        self.parts, self.size = [data], len(data)

    def text(self) -> str:
        """The kept output as text (invalid UTF-8 replaced), with a line saying what was not kept."""
        self._cut()
        kept = b"".join(self.parts).decode("utf-8", "replace")
        if self.dropped and self.last:
            kept = f"[{self.dropped} earlier bytes not kept]\n" + kept
        tail = [f"[{self.dropped} later bytes not kept]"] if self.dropped and not self.last else []
        tail += [self.note] if self.note else []
        if tail:
            kept += ("" if not kept or kept.endswith("\n") else "\n") + "\n".join(tail) + "\n"
        return kept


class Process(Protocol):
    """What the base asks of a seat's process (a Python game process, a program's process)."""

    dead: bool
    cpu_seen: float

    def pending(self) -> bool: ...
    def stop(self) -> None: ...
    def kill(self) -> None: ...


P = TypeVar("P", bound=Process)


class ProcessSeat(Generic[P]):
    """One seat of one game played by a process: a :class:`~arena.game.referee.RemoteSeat` once a
    subclass adds its wire (``start_game``, ``play_move``, ``end_round``, ``end_game``)."""

    #: How fault details name the seat's process ("the bot's worker is gone").
    process_word: ClassVar[str] = "worker"

    def __init__(
        self, factory: ProcessFactory[P], bot_key: Any, seat: int, stream: ProcessStream[P] | None = None
    ) -> None:
        self.factory = factory
        #: The stream whose process plays this game (None: a fresh process for this game alone).
        self.stream = stream
        self.limits = factory.limits
        self.name = factory.src.name
        #: The bot's seed: from the game's bot key (never the deal's seed, arena/game/seeds.py) and the seat.
        self.seed = derive_seed(bot_key, "bot", seat)
        self.worker: P | None = None
        #: The seat's context, handed over by the referee (:meth:`sit`): all it sees of the game.
        self.table: SeatContext | None = None
        #: The game's CPU seconds left: ``Limits.game_seconds`` less the process's CPU this game
        #: (all of it, in turns and between them) and what else the seat is charged (:meth:`_charged`).
        self.bank = self.limits.game_seconds
        #: The process's CPU seconds before this game (a stream's process played others), and since.
        self.cpu_base = self.cpu_total = 0.0
        #: CPU seconds of each move.
        self.cpu_times: list[float] = []
        #: Actions of this turn, all kinds; the referee's CPU (its thread's) spent on this turn and game.
        self.acted = 0
        self.turn_referee = self.referee_cpu = 0.0
        #: What the bot wrote for its author this game (its prints, a program's standard error).
        self.output = OwnOutput()

    def own_output(self) -> str:
        """The bot's own output in this game, bounded (:class:`OwnOutput`); read after :meth:`close`."""
        return self.output.text()

    def sit(self, context: SeatContext) -> None:
        """Take the seat's context from the referee (before ``start_game``): the
        :class:`~arena.game.referee.RemoteSeat` protocol."""
        self.table = context

    # -- the wire: a subclass's ----------------------------------------------------------------
    def start_game(self, info: GameInfo) -> None:
        """Take the game's process (:meth:`_take`) and start the bot's game in it."""
        raise NotImplementedError

    def play_move(self) -> None:
        """Play the seat's move in the process, through the seat's context."""
        raise NotImplementedError

    def end_round(self, result: RoundResult) -> None:
        raise NotImplementedError

    def end_game(self, result: GameResult) -> None:
        raise NotImplementedError

    # -- the process -----------------------------------------------------------------------
    def _take(self) -> P:
        """The game's process: a fresh one, or its stream's. :raises BotFault: none started."""
        try:
            worker = self.worker = self.factory.spawn() if self.stream is None else self.stream.take()
        except WorkerError as exc:
            raise BotFault(FaultKind.CRASH, f"{self.process_word} did not start: {exc}"[:300], retire=True) from None
        self.cpu_base = worker.cpu_seen
        return worker

    def _live(self) -> P:
        """The game's process, still running. :raises BotFault: it is gone."""
        worker = self.worker
        if worker is None or worker.dead:
            raise BotFault(FaultKind.CRASH, f"the bot's {self.process_word} is gone", retire=True)
        return worker

    def _charged(self) -> float:
        """CPU seconds the game's bank pays besides the process's own (none here)."""
        return 0.0

    def _spent(self, worker: P, t0: float | None = None) -> None:
        """Settle the bank after a turn: the process's CPU this game, the referee's CPU on this
        turn (from ``t0``, :func:`referee_clock`), and :meth:`_charged`."""
        if t0 is not None:
            self.turn_referee = max(referee_clock() - t0, 0.0)  # a collection in another thread: never below 0
            self.referee_cpu += self.turn_referee
        self.cpu_total = worker.cpu_seen - self.cpu_base
        self.bank = self.limits.game_seconds - self.cpu_total - self._charged()

    def _budget(self) -> float:
        """CPU seconds for the next move: the per-move limit, or the bank when it holds less."""
        return min(self.limits.move_seconds, max(self.bank, 0.0))

    # -- the turn's bounds -----------------------------------------------------------------
    def _count(self, actions: int) -> None:
        """Count a message's actions against the turn's bound, before any of them is looked at."""
        self.acted += actions
        if self.acted > self.limits.max_turn_actions:
            raise ProtocolViolation(f"{self.acted} actions in a turn (limit {self.limits.max_turn_actions})")

    def _overload(self) -> Overload:
        """The fault of a turn that cost the referee more CPU than ``Limits.referee_turn_seconds``."""
        return Overload(
            f"its messages took {self.turn_referee * 1e3:.1f} ms of the referee's CPU in a turn"
            f" (limit {self.limits.referee_turn_seconds * 1e3:.3g} ms)"
        )

    # -- faults ----------------------------------------------------------------------------
    def _timeout_text(self, exc: WorkerError) -> str:
        """How a timeout's detail says what ran over."""
        return str(exc)

    def _billed(self) -> str:
        """What a protocol violation's detail ends with (the referee's CPU the turn cost, when billed)."""
        return ""

    def _fault(self, exc: WorkerError, what: str = "") -> BotFault:
        """The fault of a failed process, which is killed: a time limit or an overload is a
        ``timeout`` that retires the seat ("; worker stopped"); a protocol violation a ``crash``
        that says so; anything else the error's own kind (a crash, a program's ``memory``)."""
        if self.worker is not None:
            self.worker.kill()
        if exc.kind is FaultKind.TIMEOUT:
            return BotFault(
                FaultKind.TIMEOUT, f"{what}{self._timeout_text(exc)}; {self.process_word} stopped"[:300], retire=True
            )
        if isinstance(exc, ProtocolViolation):
            billed = self._billed()
            return BotFault(FaultKind.CRASH, f"{what}protocol violation: {exc}"[: 300 - len(billed)] + billed)
        return BotFault(exc.kind, f"{what}{exc}"[:300], retire=True)

    # -- the end ---------------------------------------------------------------------------
    def _last_output(self, worker: P) -> None:
        """Take what the process wrote for the bot's author in this game and not yet kept (a
        program's standard error), before the process is given back or stopped (none here)."""

    def close(self) -> None:
        """The game is over: stop its process, or give it back to its stream (which stops it
        when it faulted fatally or cannot serve another game)."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        self._last_output(worker)
        if self.stream is None:
            worker.kill()
        self._spent(worker)
        if self.stream is not None:
            self.stream.give_back(worker)
        self.factory.record(self)


class ProcessFactory(Generic[P]):
    """A bot as a seat factory (the :class:`~arena.seats.contract.SeatFactory` protocol): a
    :class:`ProcessSeat` per game and seat, with a fresh process from :meth:`spawn`, or through
    a :class:`ProcessStream` (:meth:`stream`) its one process for game after game."""

    #: The seat and the stream a subclass makes.
    seat_type: ClassVar[type[ProcessSeat[Any]]] = ProcessSeat
    stream_type: ClassVar[type[ProcessStream[Any]]]

    def __init__(self, src: BotSource, limits: Limits | None = None) -> None:
        self.src = src
        self.name = src.name
        self.limits = limits or Limits()
        self.lock = threading.Lock()
        #: The layers the trial process ran under (layer name -> "active" / "unavailable: ..."), with
        #: the referee-side layers under "supervision".
        self.report: dict[str, Any] = {}
        #: What manifests record of a program (its language, API, built files); empty for a Python bot.
        self.program: dict[str, Any] = {}
        #: CPU seconds of every move played by this factory's seats (for ``arena check``), and their games.
        self.move_cpu: list[float] = []
        self.games = 0

    def spawn(self) -> P:
        """A fresh process for one game (or a stream). :raises WorkerError: it did not start."""
        raise NotImplementedError

    def record(self, seat: ProcessSeat[P]) -> None:
        """A seat's game is over: keep its move times."""
        self.games += 1
        self.move_cpu.extend(seat.cpu_times)
        del self.move_cpu[:-10000]

    def __call__(self, bot_key: Any, seat: int) -> ProcessSeat[P]:
        """A seat for one game: its bot seeded from the game's ``bot_key`` and ``seat``."""
        made: ProcessSeat[P] = self.seat_type(self, bot_key, seat)
        return made

    def stream(self) -> ProcessStream[P]:
        """A new stream of this bot: one process (started when its first game starts) for a
        sequence of games that share no deal."""
        made: ProcessStream[P] = self.stream_type(self)
        return made

    def close(self) -> None:
        """Release what the factory holds."""

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class ProcessStream(DealCheck, Generic[P]):
    """A seat factory whose games, one at a time, are played by one process of the bot.

    ``stream(bot_key, seat, deal=key)`` is a seat for the next game. The caller promises that
    no two games of a stream share a deal or any other hidden information (an escaped bot
    remembers what its process saw; docs/security/jail.md, "Streams"); given, the ``deal`` keys are
    checked (a repeat raises ``ValueError``). Per-game limits and faults stay per game (the seat
    bills the game only the CPU the process used since it began). The process is replaced, for
    the rest of the stream, when it died or was killed (a fatal fault), when it left anything
    unread, or when it has used more CPU than one game's bank. Between games it is stopped, as
    between turns.
    """

    def __init__(self, factory: ProcessFactory[P]) -> None:
        super().__init__()
        self.factory = factory
        self.worker: P | None = None
        self.busy = False
        #: Games started, and processes used, by this stream.
        self.games = 0
        self.processes = 0

    def __call__(self, bot_key: Any, seat: int, deal: Any = None) -> ProcessSeat[P]:
        self.admit(deal)
        made: ProcessSeat[P] = self.factory.seat_type(self.factory, bot_key, seat, stream=self)
        return made

    def take(self) -> P:
        """The stream's process for the next game (fresh when there is none fit to serve)."""
        if self.busy:
            raise RuntimeError("a stream plays one game at a time")
        worker = self.worker
        if worker is not None and (worker.dead or worker.cpu_seen > self.factory.limits.game_seconds):
            worker.kill()
            worker = None
        if worker is None:
            worker = self.factory.spawn()
            self.processes += 1
        self.worker = worker
        self.busy = True
        self.games += 1
        return worker

    def _unread(self, worker: P) -> bool:
        """Whether the process wrote past its last answer (never to be read in another game)."""
        return worker.pending()

    def give_back(self, worker: P) -> None:
        """The game is over: keep the process stopped for the next one, or kill it."""
        self.busy = False
        if worker is not self.worker or worker.dead or self._unread(worker):
            worker.kill()
            if worker is self.worker:
                self.worker = None
            return
        worker.stop()

    def close(self) -> None:
        """Stop the stream's process."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.kill()


ProcessFactory.stream_type = ProcessStream

__all__ = [
    "OWN_OUTPUT_BYTES",
    "SUPERVISION",
    "OwnOutput",
    "ProcessFactory",
    "ProcessSeat",
    "ProcessStream",
    "referee_clock",
    "supervision",
]
