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
from typing import Any

from ...errors import BotLoadError
from ...trust.botsource import BotSource
from ..limits import Limits
from ..seat import ProcessFactory, ProcessStream, supervision
from .process import GameProcess, Template, WorkerError, WorkerTimeout, clean
from .seat import SandboxedSeat


class Stream(ProcessStream[GameProcess]):
    """The stream of a :class:`SandboxFactory` (:class:`~arena.sandbox.seat.ProcessStream`): one
    game process, forked from the template when its first game starts, for game after game of
    different deals (each with a fresh module namespace and a fresh ``Bot``). Its RLIMIT_CPU is
    sized for a game and a half plus loading."""

    def _unread(self, worker: GameProcess) -> bool:
        return bool(worker.buf) or worker.pending()  # it wrote past its last answer


class SandboxFactory(ProcessFactory[GameProcess]):
    """Makes a :class:`SandboxedSeat` per game and seat, each with a fresh game process (the
    base's record, seats and streams: :class:`~arena.sandbox.seat.ProcessFactory`)."""

    seat_type = SandboxedSeat
    stream_type = Stream

    def __init__(
        self, src: BotSource, limits: Limits | None = None, *, eager: bool = True, escaped_for_tests: bool = False
    ) -> None:
        from ..policy.compiler import check_source

        super().__init__(src, limits)
        self.template: Template | None = None
        #: Tests only: skip layer 1 (the code policy) to test what layer 2 alone contains.
        self.escaped = escaped_for_tests
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

    def close(self) -> None:
        """Stop the template (its game processes die with it)."""
        with self.lock:
            template, self.template = self.template, None
        if template is not None:
            template.kill()


def _default_rules() -> dict[str, Any]:
    from ...game.rules import CONTEST

    return CONTEST.to_dict()


def sandbox_layers(limits: Limits | None = None) -> dict[str, str]:
    """Every layer a bot file would run under on this machine: the worker's (probed in a
    throw-away hardened interpreter) and the referee's (:func:`supervision`)."""
    from ..jail.probe import probe

    layers = dict(probe().layers)
    layers.update(supervision(limits or Limits()))
    return layers
