"""The referee's side of the sandbox: worker processes, limits, and the player that drives them.

:class:`WorkerProcess` spawns one worker (``python -I``, empty environment,
new session, pipes), talks the protocol of :mod:`arena.sandbox.protocol` with
a deadline on every wait, and kills the worker's process group when a
deadline passes (one watchdog thread per referee process). :class:`WorkerPlayer` is the referee's
:class:`~arena.referee.Player` for a sandboxed seat: it sends the seat's view,
re-applies every action the worker reports through the engine's checked
path, and turns every misbehaviour into a :class:`~arena.referee.BotFault`.
:class:`SandboxFactory` keeps workers alive across the games of a match (a
fresh ``Bot()`` is made from source, with the game's seed, for each game).
"""

from __future__ import annotations

import atexit
import json
import json.scanner
import marshal
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..cards import Card
from ..engine import Game, derive_seed
from ..errors import BotLoadError, IllegalMove
from ..loader import BotSource
from ..referee import BotFault, GameInfo
from ..turn import Turn, public_data
from .protocol import HEADER

# The C scanner of a strict JSON decoder, called directly: one call per reply (no whitespace is
# skipped; the worker sends none), and the whole frame must be one JSON value.
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]


def _decode(text: str) -> Any:
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


#: Card texts exactly as the worker sends them (anything else goes through ``Card()`` and fails there).
_CARDS = Card._by_text
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BOOT = f"import sys; sys.path.insert(0, {_ROOT!r}); from arena.sandbox.worker import main; main()"

#: marshal format 2: no back-references, so ~1/3 cheaper to write and read than the default
#: for the small messages of the protocol (the views have nothing to share).
_MARSHAL = 2

#: Bytes asked of the pipe per read: replies and views are small, and a 64 KiB buffer
#: allocated and shrunk per read costs more than the rare extra read of a long message.
_CHUNK = 4096

#: Worker uids are ``UID_BASE + pid``: distinct for every worker alive at the same time.
UID_BASE = 100000

_SIGNALS = {signal.SIGKILL: "killed", signal.SIGSYS: "killed by the seccomp filter (SIGSYS)",
            signal.SIGXCPU: "over its CPU-time limit (SIGXCPU)", signal.SIGSEGV: "crashed (SIGSEGV)",
            signal.SIGABRT: "aborted (SIGABRT)"}


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot may use. Times are wall-clock seconds measured by the referee."""

    #: Deadline for one move (all its round trips), and for each notification.
    move_seconds: float = 1.0
    #: Time bank for the whole game: the sum of the bot's move and notification times.
    game_seconds: float = 30.0
    #: Deadline for making ``Bot()`` (module code included) and ``start_game``, per game.
    load_seconds: float = 5.0
    #: Deadline for a new worker: interpreter start, imports, hardening, compiling the source.
    startup_seconds: float = 20.0
    #: Address-space cap of the worker (RLIMIT_AS).
    memory_bytes: int = 256 * 2**20
    #: The largest reply a worker may send (bytes).
    max_reply_bytes: int = 256 * 1024
    #: Printed output kept per game (characters); the rest is dropped with a mark.
    max_output_bytes: int = 4096
    #: Ask for the network-namespace and seccomp layers (reported when unavailable either way).
    network_namespace: bool = True
    seccomp: bool = True
    #: Keep the referee process on one CPU so its workers (which inherit the
    #: affinity) run beside it: a pipe round trip between two CPUs of a VM
    #: costs ~50 us, on one CPU ~8 us (benchmarks/sandbox.py shows the effect).
    same_cpu: bool = True


def current_cpu() -> int | None:
    """The CPU this process last ran on (Linux ``/proc/self/stat``), or None."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[36])
    except (OSError, IndexError, ValueError):
        return None


def pin_to_one_cpu(cpu: int | None = None) -> int | None:
    """Bind this process to ``cpu`` (default: the one it runs on) when it may use several.

    Returns the CPU it is bound to, or None when affinity is not available."""
    try:
        cpus = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return None
    if len(cpus) == 1:
        return next(iter(cpus))
    if cpu is None:
        cpu = current_cpu()
    if cpu not in cpus:
        return None
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


class WorkerError(Exception):
    """The worker is unusable: it died, missed a deadline or broke the protocol."""

    kind = "crash"


class WorkerTimeout(WorkerError):
    kind = "timeout"


class ProtocolViolation(WorkerError):
    pass


_live: "weakref.WeakSet[WorkerProcess]" = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for w in list(_live):
        if w.owner == os.getpid():
            w.kill()


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            sig = signal.Signals(-code)
        except ValueError:
            return f"killed by signal {-code}"
        return _SIGNALS.get(sig, f"killed by {sig.name}")
    return f"exited with status {code}"


def _clean(text: Any, limit: int) -> str:
    """A string from the worker, cut to ``limit`` and safe to write anywhere."""
    if type(text) is not str:
        text = repr(text)
    return text[:limit].encode("utf-8", "replace").decode("utf-8")


class _Watchdog:
    """One thread per referee process that kills workers whose deadline has passed.

    The referee reads and writes its pipes with plain blocking calls (the
    cheapest way: no poll per message); a worker that misses its deadline is
    killed from here, which ends the blocked call with end-of-file.

    Arming a worker is one attribute write (``worker.deadline``), with no
    lock: the thread reads the clock *before* it reads a deadline, and the
    referee reads the clock *after* it clears one (:meth:`disarm`), so a worker
    the thread kills is always one the referee itself finds late. A worker is
    registered once (:meth:`watch`) and dropped when it is killed.
    """

    PERIOD = 0.005

    def __init__(self) -> None:
        self.workers: dict[int, WorkerProcess] = {}
        self.thread: threading.Thread | None = None
        self.pid = 0

    def watch(self, worker: "WorkerProcess") -> None:
        if self.pid != os.getpid():  # first use, or a forked child: start afresh
            self.workers = {}
            self.pid = os.getpid()
            self.thread = threading.Thread(target=self._run, name="arena-sandbox-watchdog", daemon=True)
            self.thread.start()
        self.workers[id(worker)] = worker

    def forget(self, worker: "WorkerProcess") -> None:
        if self.pid == os.getpid():
            self.workers.pop(id(worker), None)

    @staticmethod
    def arm(worker: "WorkerProcess", deadline: float) -> None:
        worker.deadline = deadline

    @staticmethod
    def disarm(worker: "WorkerProcess", start: float, budget: float) -> tuple[bool, float]:
        """Stop watching: (in time, seconds since ``start``). Late when the thread killed the
        worker or when the time taken, read after clearing the deadline, is over ``budget``."""
        worker.deadline = _NEVER
        took = time.monotonic() - start
        return (took <= budget and not worker.timed_out), took

    def _run(self) -> None:
        monotonic, sleep = time.monotonic, time.sleep
        while True:
            sleep(self.PERIOD)
            for worker in list(self.workers.values()):
                now = monotonic()  # the clock first, then the deadline (see the class docstring)
                if now > worker.deadline and not worker.timed_out:
                    worker.timed_out = True
                    worker.signal_kill()


_NEVER = float("inf")
_watchdog = _Watchdog()


class WorkerProcess:
    """One live worker and the referee's end of its pipes."""

    def __init__(self, src: BotSource, limits: Limits, *, raw_ok: bool = False, escaped: bool = False) -> None:
        self.limits = limits
        self.dead = False
        self.timed_out = False
        #: When the watchdog kills this worker (monotonic seconds); never while idle.
        self.deadline = _NEVER
        self.busy = 0.0
        self.buf = b""
        self.owner = os.getpid()
        if limits.same_cpu:
            pin_to_one_cpu()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={}, cwd="/", start_new_session=True, close_fds=True)
        _live.add(self)
        _watchdog.watch(self)
        self.fd_w = self.proc.stdin.fileno()  # type: ignore[union-attr]
        self.fd_r = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.fd_e = self.proc.stderr.fileno()  # type: ignore[union-attr]
        os.set_blocking(self.fd_e, False)
        self.max_reply = limits.max_reply_bytes
        config = {"name": src.name, "source": src.source, "path": src.path,
                  "memory_bytes": limits.memory_bytes,
                  "cpu_seconds": int(limits.game_seconds * 2 + limits.startup_seconds + 10),
                  "uid": UID_BASE + self.proc.pid if os.geteuid() == 0 else None,
                  "network": limits.network_namespace, "seccomp": limits.seccomp,
                  "max_output": limits.max_output_bytes, "raw_ok": raw_ok or escaped, "escaped": escaped}
        try:
            reply, _ = self.call(("hello", config), limits.startup_seconds)
        except WorkerError:
            self.kill()
            raise
        if not (type(reply) is list and len(reply) == 3 and reply[0] == "ready" and type(reply[1]) is dict):
            self.kill()
            raise ProtocolViolation("bad ready message")
        self.report: dict = reply[1]
        self.load_error: Any = reply[2]

    # -- pipes (call only between arm() and disarm() of the watchdog) -------------------------
    def send(self, message: Any) -> None:
        payload = marshal.dumps(message, _MARSHAL)
        try:
            os.write(self.fd_w, HEADER.pack(len(payload)) + payload)
        except OSError:
            raise self._died() from None

    def recv(self) -> Any:
        """The next message (blocking; the watchdog ends the wait at the deadline)."""
        buf = self.buf
        read, fd = os.read, self.fd_r
        while True:
            if len(buf) >= 4:
                (size,) = HEADER.unpack_from(buf)
                if size > self.max_reply:
                    raise ProtocolViolation(f"a reply of {size} bytes (limit {self.max_reply})")
                end = 4 + size
                if len(buf) >= end:
                    self.buf = buf[end:]
                    try:
                        return _decode(buf[4:end].decode())
                    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                        raise ProtocolViolation("a reply that is not JSON") from None
            try:
                data = read(fd, _CHUNK)
            except OSError:
                data = b""
            if not data:
                raise self._died()
            buf += data

    def call(self, message: Any, seconds: float) -> tuple[Any, float]:
        """Send, wait for the reply; (reply, seconds waited). Raises :class:`WorkerError`."""
        start = time.monotonic()
        self.deadline = start + seconds
        try:
            self.send(message)
            reply = self.recv()
        finally:
            in_time, took = _watchdog.disarm(self, start, seconds)
            self.busy += took
        if not in_time:
            raise WorkerTimeout("no answer in time")
        return reply, took

    def stderr_tail(self) -> str:
        """The last line the worker wrote to stderr (Python's own fatal errors land there)."""
        err = b""
        while True:
            try:
                data = os.read(self.fd_e, 1 << 16)
            except (BlockingIOError, OSError, ValueError):
                break
            if not data:
                break
            err = (err + data)[-4096:]
        lines = err.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:160] if lines else ""

    def _died(self) -> WorkerError:
        if self.timed_out:
            self.kill()
            return WorkerTimeout("no answer in time")
        self.dead = True
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        last = self.stderr_tail()
        self.kill()
        if self.timed_out:
            return WorkerTimeout("no answer in time")
        return WorkerError(f"worker {_describe_exit(code)}" + (f": {last}" if last else ""))

    def signal_kill(self) -> None:
        """SIGKILL the worker's process group (safe from the watchdog thread)."""
        if self.proc.returncode is not None or self.owner != os.getpid():
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self) -> None:
        """Kill the worker's whole process group and close the pipes (idempotent).

        Only in the process that started it: a forked copy of this object does nothing."""
        self.dead = True
        if self.owner != os.getpid():
            return
        if self.proc.returncode is None:
            self.signal_kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
        _live.discard(self)
        _watchdog.forget(self)


# -- the public history, as sandboxed bots get it ------------------------------------------

# Per game: [game, public events so far, log entries they cover], for the few
# most recent games, keyed by id() and holding the game itself (so an id is
# never reused while cached). Not a WeakKeyDictionary: a compiled Game
# (arena/native.py) takes no weak references.
_PUBLIC: "OrderedDict[int, list]" = OrderedDict()
_PUBLIC_GAMES = 16


def public_log(game: Game) -> list[dict]:
    """The game's public events as plain data (R10), shared by its sandboxed seats.

    A bot's printed output (``say`` lines marked ``output``) is kept out: only ``turn.say`` is public.
    """
    cache = _PUBLIC.get(id(game))
    if cache is None or cache[0] is not game:
        cache = _PUBLIC[id(game)] = [game, [], 0]
        while len(_PUBLIC) > _PUBLIC_GAMES:
            _PUBLIC.popitem(last=False)
    _, events, seen = cache
    log = game.log
    if seen < len(log):
        for e in log[seen:]:
            if e["event"] == "say" and e.get("output"):
                continue
            events.append(public_data(e))
        cache[2] = len(log)
    return events


# -- the player ------------------------------------------------------------------------------

class WorkerPlayer:
    """A sandboxed seat, as the referee drives it (the :class:`~arena.referee.Player` protocol)."""

    def __init__(self, factory: "SandboxFactory", game_seed: Any, seat: int) -> None:
        self.factory = factory
        self.limits = factory.limits
        self.name = factory.src.name
        self.seed = derive_seed(game_seed, "bot", seat)
        self.worker: WorkerProcess | None = None
        self.bank = self.limits.game_seconds
        self.hooks: tuple[str, ...] = ()
        self.sent = 0
        self.history_on = False
        self.output_left = self.limits.max_output_bytes
        self.pending_output: list[str] = []
        self.game: Game | None = None
        self.idle = False
        self.said = 0

    # -- helpers ---------------------------------------------------------------------------
    def _fault(self, exc: WorkerError, what: str = "") -> BotFault:
        if self.worker is not None:
            self.worker.kill()
        detail = str(exc)
        if isinstance(exc, WorkerTimeout):
            why = str(exc) if str(exc).startswith("over") else "over the time limit"
            return BotFault("timeout", f"{what}{why}; worker stopped", retire=True)
        if isinstance(exc, ProtocolViolation):
            return BotFault("crash", f"{what}protocol violation: {detail}"[:300])
        return BotFault("crash", f"{what}{detail}"[:300])

    def _call(self, message: Any, seconds: float, what: str = "") -> Any:
        worker = self.worker
        if worker is None or worker.dead:
            raise BotFault("crash", "the bot's worker is gone", retire=True)
        self.idle = False
        try:
            reply, took = worker.call(message, min(seconds, max(self.bank, 0.0)))
        except WorkerError as exc:
            raise self._fault(exc, what) from None
        self.bank -= took
        if not (type(reply) is list and len(reply) == 5 and reply[0] == "ok" and type(reply[1]) is list):
            raise self._fault(ProtocolViolation("bad reply to a notification"), what)
        self.idle = True
        hooks = reply[4]
        if type(hooks) is list and all(type(h) is str for h in hooks):
            self.hooks = tuple(hooks)
        self._keep_output(reply[1])
        return reply

    def _keep_output(self, actions: list) -> None:
        """Output printed outside a move: kept until it can join the game record."""
        for action in actions:
            if type(action) is list and len(action) == 2 and action[0] == "o" and type(action[1]) is str:
                text = self._cap_output(action[1])
                if text:
                    self.pending_output.append(text)
            else:
                raise self._fault(ProtocolViolation("an action outside a move"))

    def _cap_output(self, text: Any) -> str:
        text = _clean(text, max(self.output_left, 0))
        self.output_left -= len(text)
        return text

    def _flush_output(self, game: Game, seat: int) -> None:
        for text in self.pending_output:
            game.say(seat, text, output=True)
        self.pending_output.clear()

    # -- the Player protocol ---------------------------------------------------------------
    def start_game(self, info: GameInfo) -> None:
        self.seat = info.seat
        try:
            self.worker = self.factory.acquire()
        except WorkerError as exc:
            raise BotFault("crash", f"worker did not start: {exc}"[:300]) from None
        reply = self._call(("game", self.seed, info.seat, list(info.players), info.rules.to_dict(), info.game),
                           self.limits.load_seconds, "")
        load_error, error = reply[3], reply[2]
        if load_error is not None:
            self.worker.kill()
            raise BotFault("crash", f"could not load: {_clean(load_error, 250)}")
        if error is not None:
            raise BotFault("exception", _clean(error, 300))

    def move(self, turn: Turn) -> None:
        move = turn._move
        game: Game = turn._table.game  # type: ignore[attr-defined]
        seat = move.seat
        self.game = game
        if self.pending_output:
            self._flush_output(game, seat)
        worker = self.worker
        if worker is None or worker.dead:
            raise BotFault("crash", "the bot's worker is gone", retire=True)
        delta = self._delta(game) if self.history_on else None
        hand = move.hand
        # A move that must begin with a draw gets the stock's top card with its view: that card
        # lands in this seat's hand in this move whatever the bot does (the fallback draws it
        # too), so sending it early shows the seat nothing it would not see, and saves a round trip.
        prefetch = None
        if not move.put and game.stock and not move.puttable():
            prefetch = game.stock[-1]._text
        view = (seat, [c._text for c in hand], move.top._text, move.suit, [c._text for c in move.put],
                move.first, move.stock, move.pile_size,
                [len(h) for h in game.hands] + game.scores + game.skips, delta, prefetch)
        budget = min(self.limits.move_seconds, max(self.bank, 0.0))
        start = time.monotonic()
        self.idle = False
        self.said = 0
        error: Any = None
        worker.deadline = start + budget
        try:
            worker.send(("move", view))
            while True:
                reply = worker.recv()
                if type(reply) is not list or len(reply) < 2 or type(reply[1]) is not list:
                    raise ProtocolViolation("a malformed message")
                kind = reply[0]
                self._apply(reply[1], game, move, seat, prefetch)
                if kind == "done":
                    if len(reply) != 3:
                        raise ProtocolViolation("a malformed done message")
                    error = reply[2]
                    break
                if kind == "draw":
                    if move.finished or game.move is not move:
                        raise ProtocolViolation("a draw after the move ended")
                    try:
                        card = game.draw()
                    except IllegalMove as exc:
                        raise ProtocolViolation(f"an illegal draw ({exc.rule})") from None
                    worker.send(("card", card._text, move.stock, move.pile_size, self._delta(game)))
                elif kind == "hist":
                    self.history_on = True
                    self.sent = 0
                    worker.send(("hist", self._delta(game)))
                else:
                    raise ProtocolViolation(f"an unknown message {str(kind)[:20]!r}")
        except WorkerError as exc:
            in_time, took = _watchdog.disarm(worker, start, budget)
            self._spent(worker, took)
            if not in_time or isinstance(exc, WorkerTimeout):
                exc = self._late(budget)
            raise self._fault(exc) from None
        in_time, took = _watchdog.disarm(worker, start, budget)
        self._spent(worker, took)
        if not in_time:
            raise self._fault(self._late(budget))
        self.idle = True
        if error is None:
            return
        if type(error) is not str:
            raise self._fault(ProtocolViolation("a malformed error field"))
        raise BotFault("exception", _clean(error, 300))

    def _late(self, budget: float) -> WorkerTimeout:
        which = "the per-move limit" if budget >= self.limits.move_seconds else "the game's time bank left"
        return WorkerTimeout(f"over {which} ({budget:.3g} s)")

    def _spent(self, worker: WorkerProcess, took: float) -> None:
        worker.busy += took
        self.bank -= took

    def _delta(self, game: Game) -> list | None:
        """The public events the worker has not seen yet (None until the bot reads the history)."""
        if not self.history_on:
            return None
        events = public_log(game)
        delta = events[self.sent:]
        self.sent = len(events)
        return delta

    def _apply(self, actions: list, game: Game, move: Any, seat: int, prefetch: str | None = None) -> None:
        """Re-apply the worker's actions through the engine's checked path."""
        for action in actions:
            if type(action) is not list or not action:
                raise ProtocolViolation("bad action")
            kind = action[0]
            if kind == "o":
                if len(action) != 2 or type(action[1]) is not str:
                    raise ProtocolViolation("bad output action")
                text = self._cap_output(action[1])
                if text:
                    game.say(seat, text, output=True)
                continue
            if move.finished or game.move is not move or not game.in_round:
                raise ProtocolViolation("action after the move ended")
            try:
                if kind == "p" and len(action) == 3:
                    card, suit = action[1], action[2]
                    if type(card) is not str or not (suit is None or type(suit) is str):
                        raise ProtocolViolation("bad put")
                    game.put(_CARDS.get(card) or Card(card), suit)
                elif kind == "f" and len(action) == 1:
                    game.finish()
                elif kind == "d" and len(action) == 2:
                    if prefetch is None or action[1] != prefetch or move.put or move.drew:
                        raise ProtocolViolation("a draw of a card it was not given")
                    if game.draw()._text != prefetch:
                        raise ProtocolViolation("the drawn card is not the one sent")
                elif kind == "s" and len(action) == 2 and type(action[1]) is str:
                    self.said += 1
                    if self.said > 20:
                        raise ProtocolViolation("more than 20 says in a move")
                    game.say(seat, _clean(action[1], 200))
                else:
                    raise ProtocolViolation(f"unknown action {str(kind)[:10]!r}")
            except (IllegalMove, ValueError) as exc:
                if isinstance(exc, ProtocolViolation):
                    raise
                raise ProtocolViolation(f"illegal action {str(action)[:40]}: {exc}"[:200]) from None

    def end_round(self, result: Any) -> None:
        if "end_round" in self.hooks:
            self._call(("end_round", [result.round, result.winner, list(result.points), list(result.scores),
                                      list(result.burned)]), self.limits.move_seconds, "")
            if self.pending_output and self.game is not None and not self.game.over:
                self._flush_output(self.game, self.seat)

    def end_game(self, result: Any) -> None:
        if "end_game" in self.hooks:
            self._call(("end_game", [list(result.scores), list(result.losers), list(result.places),
                                     result.rounds]), self.limits.move_seconds, "")
        self.pending_output.clear()  # nothing may follow the "end" line of a record

    def close(self) -> None:
        """Give the worker back to the factory when it is idle and healthy; else stop it."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        if self.idle and not worker.dead:
            self.factory.release(worker)
        else:
            worker.kill()


class SandboxFactory:
    """Makes a :class:`WorkerPlayer` per game and seat, reusing idle workers across games."""

    def __init__(self, src: BotSource, limits: Limits | None = None, *, eager: bool = True,
                 escaped_for_tests: bool = False) -> None:
        from .policy import check_source

        self.src = src
        self.limits = limits or Limits()
        self.name = src.name
        self.idle: list[WorkerProcess] = []
        self.lock = threading.Lock()
        #: Tests only: skip layer 1 (the code policy) to test what layer 2 alone contains.
        self.escaped = escaped_for_tests
        self.report: dict = {}
        if not escaped_for_tests:
            check_source(src)
        if eager:
            self._trial()

    def _trial(self) -> None:
        """Start one worker and load the bot once, so load errors surface before any game."""
        try:
            worker = self._spawn()
        except WorkerError as exc:
            raise BotLoadError(f"sandbox worker did not start: {exc}", path=self.src.label) from None
        try:
            reply, _ = worker.call(("game", 0, 0, ["probe", "probe"], _default_rules(), "probe"),
                                   self.limits.load_seconds)
        except WorkerError as exc:
            worker.kill()
            if isinstance(exc, WorkerTimeout):
                raise BotLoadError(f"loading took longer than {self.limits.load_seconds:g} s",
                                   path=self.src.label) from None
            raise BotLoadError(f"loading crashed the sandbox worker: {exc}", path=self.src.label) from None
        if type(reply) is list and len(reply) == 5 and reply[3] is not None:
            worker.kill()
            raise BotLoadError(_clean(reply[3], 300), path=self.src.label)
        #: The hardening report of the first worker (layer name -> "active" / "unavailable: ..." / "failed: ...").
        self.report = worker.report
        self.release(worker)

    def _spawn(self) -> WorkerProcess:
        worker = WorkerProcess(self.src, self.limits, escaped=self.escaped)
        if worker.load_error is not None:
            worker.kill()
            message, line = (worker.load_error + [None])[:2] if type(worker.load_error) is list else ("?", None)
            raise BotLoadError(_clean(str(message), 300), path=self.src.label,
                               line=line if type(line) is int else None)
        return worker

    def acquire(self) -> WorkerProcess:
        """An idle worker, or a new one."""
        with self.lock:
            while self.idle:
                worker = self.idle.pop()
                if worker.owner == os.getpid() and not worker.dead:
                    return worker
        try:
            return self._spawn()
        except BotLoadError as exc:
            raise WorkerError(exc.message) from None

    def release(self, worker: WorkerProcess) -> None:
        """Take back an idle worker; one that has used much time is retired (its CPU limit counts all)."""
        if worker.dead or worker.owner != os.getpid() or worker.busy > self.limits.game_seconds:
            worker.kill()
            return
        with self.lock:
            self.idle.append(worker)

    def __call__(self, game_seed: Any, seat: int) -> WorkerPlayer:
        return WorkerPlayer(self, game_seed, seat)

    def close(self) -> None:
        """Stop every idle worker."""
        with self.lock:
            idle, self.idle = self.idle, []
        for worker in idle:
            worker.kill()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def _default_rules() -> dict:
    from ..rules import CONTEST

    return CONTEST.to_dict()


def sandboxed_factory(src: BotSource, limits: Limits | None = None) -> SandboxFactory:
    """``factory(game_seed, seat) -> WorkerPlayer`` for untrusted bot source.

    :raises BotLoadError: the source fails the static checks or cannot be loaded in a worker.
    """
    return SandboxFactory(src, limits)
