"""The sandboxed bot as a player factory: one template process per bot, a fresh game process
per game or per stream of games.

:class:`SandboxFactory` checks the source (layer 1), starts the bot's
:class:`~arena.sandbox.python.process.Template` and, eagerly, loads the bot once in a
trial game process so that load errors surface before any game. Each
:class:`~arena.sandbox.python.seat.SandboxedSeat` it makes gets its own game process,
forked from the template and killed when the game ends; or, through a
:class:`Stream` (:meth:`SandboxFactory.stream`), the stream's one process, which
plays game after game of different deals (each with a fresh module namespace and
a fresh ``Bot``) and is replaced when it faults fatally.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ...errors import BotLoadError
from ...trust.botsource import BotSource
from ..limits import Limits, cpu_clocks_work
from .process import GameProcess, Template, WorkerError, WorkerTimeout, clean
from .seat import SandboxedSeat

#: Layers the referee itself provides, beside the worker's (:data:`arena.sandbox.jail.harden.LAYERS`).
SUPERVISION: tuple[str, ...] = ("cpu_time", "freeze", "fresh_process")


def supervision(limits: Limits) -> dict[str, str]:
    """The referee-side layers in force for ``limits`` (name -> "active" or why not)."""
    return {
        "cpu_time": "active" if cpu_clocks_work() else "unavailable: cannot read a process's CPU clock",
        "freeze": "active" if limits.freeze else "unavailable: disabled by caller (freeze=False)",
        "fresh_process": "active",
    }


class SandboxFactory:
    """Makes a :class:`SandboxedSeat` per game and seat, each with a fresh game process."""

    def __init__(
        self, src: BotSource, limits: Limits | None = None, *, eager: bool = True, escaped_for_tests: bool = False
    ) -> None:
        from ..policy.compiler import check_source

        self.src = src
        self.limits = limits or Limits()
        self.name = src.name
        self.lock = threading.Lock()
        self.template: Template | None = None
        #: Tests only: skip layer 1 (the code policy) to test what layer 2 alone contains.
        self.escaped = escaped_for_tests
        #: The hardening report of the trial game process (layer name -> "active" / "unavailable: ..."),
        #: with the referee-side layers under "supervision".
        self.report: dict[str, Any] = {}
        #: CPU seconds of every move played by this factory's players (for ``arena check``).
        self.move_cpu: list[float] = []
        self.games = 0
        if not escaped_for_tests:
            check_source(src)
        if eager:
            self._trial()

    def _template(self) -> Template:
        """The live template (started, or restarted once it died)."""
        with self.lock:
            template = self.template
            if template is not None and not template.dead and template.owner == os.getpid():
                return template
            template = Template(self.src, self.limits, escaped=self.escaped)
            if template.load_error is not None:
                template.kill()
                error = template.load_error
                message, line = (error + [None])[:2] if type(error) is list else ("?", None)
                raise BotLoadError(
                    clean(str(message), 300), path=self.src.label, line=line if type(line) is int else None
                )
            self.template = template
            return template

    def _trial(self) -> None:
        """Start the template and load the bot once, so load errors surface before any game."""
        try:
            worker = self._template().spawn()
        except WorkerError as exc:
            raise BotLoadError(f"sandbox worker did not start: {exc}", path=self.src.label) from None
        try:
            load = self.limits.load_seconds
            reply, _ = worker.call(
                ("game", 0, 0, ["probe", "probe"], _default_rules(), "probe"), load, load, "load limit"
            )
        except WorkerError as exc:
            worker.kill()
            if isinstance(exc, WorkerTimeout):
                raise BotLoadError(f"loading took longer than {load:g} s of CPU", path=self.src.label) from None
            raise BotLoadError(f"loading crashed the sandbox worker: {exc}", path=self.src.label) from None
        worker.kill()
        if type(reply) is list and len(reply) == 5 and reply[3] is not None:
            raise BotLoadError(clean(reply[3], 300), path=self.src.label)
        # The layers the game process wrote before the bot's code ran (GameProcess._recv_layers), not
        # anything in its answer, which comes after: an escaped bot cannot forge them.
        if worker.report:
            self.report = dict(worker.report, supervision=supervision(self.limits))

    def spawn(self) -> GameProcess:
        """A fresh game process for one game. Raises :class:`WorkerError`."""
        try:
            template = self._template()
        except BotLoadError as exc:
            raise WorkerError(exc.message) from None
        try:
            return template.spawn()
        except WorkerError:
            if not template.dead:
                raise
        try:  # the template died (killed from outside?): one fresh start
            return self._template().spawn()
        except BotLoadError as exc:
            raise WorkerError(exc.message) from None

    def record(self, player: SandboxedSeat) -> None:
        """A player's game is over: keep its move times."""
        self.games += 1
        self.move_cpu.extend(player.cpu_times)
        del self.move_cpu[:-10000]

    def __call__(self, bot_key: Any, seat: int) -> SandboxedSeat:
        """A seat for one game: its bot seeded from the game's ``bot_key`` and ``seat``."""
        return SandboxedSeat(self, bot_key, seat)

    def stream(self) -> Stream:
        """A new stream of this bot: one process (forked from the template when the first game
        starts) for a sequence of games that share no deal."""
        return Stream(self)

    def close(self) -> None:
        """Stop the template (its game processes die with it)."""
        with self.lock:
            template, self.template = self.template, None
        if template is not None:
            template.kill()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class Stream:
    """A seat factory whose games, one at a time, are played by one game process of the bot.

    ``stream(bot_key, seat, deal=key)`` is a :class:`SandboxedSeat` for the next game. The
    caller promises that no two games of a stream share a deal or any other hidden information
    (an escaped bot remembers what its process saw; docs/SECURITY.md, "Streams"); given, the
    ``deal`` keys are checked (a repeat raises ``ValueError``). Per-game limits and faults stay
    per game (the seat bills the game only the CPU the process used since it began). The
    process is replaced, for the rest of the stream, when it died or was killed (a fatal
    fault), when it left anything unread on its pipe, or when it has used more CPU than one
    game's bank (its RLIMIT_CPU is sized for a game and a half plus loading). Between games it
    is stopped, as between turns.
    """

    def __init__(self, factory: SandboxFactory) -> None:
        self.factory = factory
        self.worker: GameProcess | None = None
        self.busy = False
        self.deals: set[Any] = set()
        #: Games started, and game processes used, by this stream.
        self.games = 0
        self.processes = 0

    def __call__(self, bot_key: Any, seat: int, deal: Any = None) -> SandboxedSeat:
        if deal is not None:
            if deal in self.deals:
                raise ValueError("a stream never plays one deal twice")
            self.deals.add(deal)
        return SandboxedSeat(self.factory, bot_key, seat, stream=self)

    def take(self) -> GameProcess:
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

    def give_back(self, worker: GameProcess) -> None:
        """The game is over: keep the process stopped for the next one, or kill it."""
        self.busy = False
        if worker is not self.worker or worker.dead:
            worker.kill()
            return
        if worker.buf or worker.pending():  # it wrote past its last answer: never read in another game
            worker.kill()
            self.worker = None
            return
        worker.stop()

    def close(self) -> None:
        """Stop the stream's process."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.kill()


def _default_rules() -> dict[str, Any]:
    from ...game.rules import CONTEST

    return CONTEST.to_dict()


def sandboxed_factory(src: BotSource, limits: Limits | None = None) -> Any:
    """``factory(bot_key, seat) -> SandboxedSeat`` for untrusted bot source (a
    :class:`~arena.sandbox.programs.seat.ProgramFactory` for a bot program, docs/protocol.md).

    :raises BotLoadError: the source fails the static checks or cannot be loaded in a worker.
    """
    if src.runtime != "python":
        from ..programs.runtimes import program_factory

        return program_factory(src, limits)
    return SandboxFactory(src, limits)


def sandbox_layers(limits: Limits | None = None) -> dict[str, str]:
    """Every layer a bot file would run under on this machine: the worker's (probed in a
    throw-away hardened interpreter) and the referee's (:func:`supervision`)."""
    from ..jail.probe import probe

    layers = dict(probe().layers)
    layers.update(supervision(limits or Limits()))
    return layers
