"""The referee's player for a sandboxed seat (:class:`SandboxedSeat`).

A :class:`SandboxedSeat` gets a fresh game process from its bot's
:class:`~arena.sandbox.python.factory.SandboxFactory` for each game (or its stream's
process, :class:`~arena.sandbox.python.factory.Stream`), sends the seat's
view each move (a :class:`~arena.sandbox.python.protocol.MoveView`), re-applies every
action the process reports through the engine's checked path, and turns every misbehaviour into a
:class:`~arena.game.referee.BotFault`. Each call is one *turn* of the process
(:meth:`~arena.sandbox.python.process.GameProcess.begin` ... ``end``): continued
while it is on turn, frozen otherwise, timed by its CPU clock.

It sees the game only through the :class:`~arena.game.referee.SeatContext` the
referee hands it (:meth:`SandboxedSeat.sit`), never the engine itself; the
public history comes from the game's one :class:`~arena.botapi.turn.PublicFeed`.
"""

from __future__ import annotations

import gc
from time import thread_time
from typing import TYPE_CHECKING, Any

from ...botapi.turn import SAY_CHARS, SAYS_PER_MOVE
from ...errors import IllegalMove
from ...game.cards import Card
from ...game.events import FaultKind
from ...game.referee import BotFault, GameInfo, SeatContext
from ...game.seeds import derive_seed
from .process import GameProcess, Overload, ProtocolViolation, WorkerError, WorkerTimeout, clean
from .protocol import DrawnCard, GameEnd, GameStart, PileCards, RoundEnd, parse_ok

if TYPE_CHECKING:
    from ...game.engine import GameResult, RoundResult
    from ...game.moves import Move
    from .factory import SandboxFactory, Stream

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


def _clock() -> float:
    """The referee thread's CPU seconds, less its garbage collections."""
    return thread_time() - _gc_seconds[0]


#: Room for the worker's truncation mark beyond a game's output limit (the mark is 20 characters).
_MARK_ROOM = 32

#: Card texts exactly as the worker sends them (anything else goes through ``Card()`` and fails there).
_CARDS = Card._by_text


class SandboxedSeat:
    """A sandboxed seat, as the referee drives it (the :class:`~arena.game.referee.RemoteSeat` protocol)."""

    def __init__(self, factory: SandboxFactory, bot_key: Any, seat: int, stream: Stream | None = None) -> None:
        self.factory = factory
        #: The stream whose process plays this game (None: a fresh process for this game alone).
        self.stream = stream
        #: The process's CPU seconds (all, between turns) before this game: the game's are the rest.
        self.cpu_base = self.idle_base = 0.0
        self.limits = factory.limits
        self.name = factory.src.name
        #: The bot's seed: from the game's bot key (never the deal's seed, arena/game/seeds.py) and the seat.
        self.seed = derive_seed(bot_key, "bot", seat)
        self.worker: GameProcess | None = None
        self.bank = self.limits.game_seconds
        self.hooks: tuple[str, ...] = ()
        self.sent = 0
        self.history_on = False
        #: Whether the worker asked for the pile alone, and the (round, cards) of it already sent.
        self.pile_on = False
        self.pile_mark = (-1, 0)
        self.output_left = self.limits.max_output_bytes
        self.pending_output: list[str] = []
        #: The seat's context, handed over by the referee (:meth:`sit`): all it sees of the game.
        self.table: SeatContext | None = None
        self.idle = False
        self.said = 0
        #: Actions the game process reported in this turn (a move or a notification), all kinds.
        self.acted = 0
        #: The referee's CPU seconds (its thread's) spent on this seat: this turn's, the game's.
        #: Billed to the seat: taken from its bank, and faulted past ``Limits.referee_turn_seconds``.
        self.turn_referee = 0.0
        self.referee_cpu = 0.0
        #: CPU seconds of each move, the game process's total, and what it used between turns.
        self.cpu_times: list[float] = []
        self.cpu_total = 0.0
        self.idle_cpu = 0.0
        #: Whether its game process was being stopped between turns (see ``Limits.freeze_after``).
        self.frozen = False

    # -- helpers ---------------------------------------------------------------------------
    def _fault(self, exc: WorkerError, what: str = "") -> BotFault:
        if self.worker is not None:
            self.worker.kill()
        detail = str(exc)
        if isinstance(exc, Overload):
            return BotFault(FaultKind.TIMEOUT, f"{what}{detail}; worker stopped"[:300], retire=True)
        if isinstance(exc, WorkerTimeout):
            why = str(exc) if str(exc).startswith(("over", "used")) else "over the time limit"
            return BotFault(FaultKind.TIMEOUT, f"{what}{why}; worker stopped", retire=True)
        if isinstance(exc, ProtocolViolation):
            billed = f"; referee CPU {self.turn_referee * 1e3:.2f} ms"
            return BotFault(FaultKind.CRASH, f"{what}protocol violation: {detail}"[: 300 - len(billed)] + billed)
        return BotFault(FaultKind.CRASH, f"{what}{detail}"[:300])

    def _call(self, message: tuple[Any, ...], seconds: float, what: str = "", label: str = "per-move limit") -> Any:
        worker = self.worker
        if worker is None or worker.dead:
            raise BotFault(FaultKind.CRASH, "the bot's worker is gone", retire=True)
        self.idle = False
        self.acted = 0
        t0 = _clock()
        try:
            reply, _ = worker.call(message, min(seconds, max(self.bank, 0.0)), seconds, label)
            ok = parse_ok(reply)
            if ok is None:
                raise ProtocolViolation("bad reply to a notification")
            self._keep_output(ok.actions)
        except WorkerError as exc:
            self._spent(worker, t0)
            raise self._fault(exc, what) from None
        self._spent(worker, t0)
        if self.turn_referee > self.limits.referee_turn_seconds:
            raise self._fault(self._overload(), what)
        self.idle = True
        hooks = ok.hooks
        if type(hooks) is list and all(type(h) is str for h in hooks):
            self.hooks = tuple(hooks)
        return ok

    def _overload(self) -> Overload:
        return Overload(
            f"its messages took {self.turn_referee * 1e3:.1f} ms of the referee's CPU in a turn"
            f" (limit {self.limits.referee_turn_seconds * 1e3:.3g} ms)"
        )

    def _count(self, actions: list[Any]) -> None:
        """Count a message's actions against the turn's bound, before any of them is looked at."""
        self.acted += len(actions)
        if self.acted > self.limits.max_turn_actions:
            raise ProtocolViolation(f"{self.acted} actions in a turn (limit {self.limits.max_turn_actions})")

    def _keep_output(self, actions: list[Any]) -> None:
        """Output printed outside a move: kept until it can join the game record."""
        self._count(actions)
        for action in actions:
            if type(action) is list and len(action) == 2 and action[0] == "o" and type(action[1]) is str:
                text = self._cap_output(action[1])
                if text:
                    self.pending_output.append(text)
            else:
                raise ProtocolViolation("an action outside a move")

    def _cap_output(self, text: str) -> str:
        # The worker keeps the same count (its sink has the same limit): an honest text is never
        # longer than what is left, past the end only the truncation mark may come.
        if len(text) > self.output_left + _MARK_ROOM:
            raise ProtocolViolation(f"{len(text)} characters of output past the game's limit")
        kept = clean(text, max(self.output_left, 0))
        self.output_left -= len(kept)
        return kept

    def _flush_output(self, table: SeatContext) -> None:
        for text in self.pending_output:
            table.say(text, output=True)
        self.pending_output.clear()

    # -- the Player protocol ---------------------------------------------------------------
    def sit(self, context: SeatContext) -> None:
        """Take the seat's context from the referee (before ``start_game``): the
        :class:`~arena.game.referee.RemoteSeat` protocol."""
        self.table = context

    def start_game(self, info: GameInfo) -> None:
        self.seat = info.seat
        try:
            worker = self.worker = self.factory.spawn() if self.stream is None else self.stream.take()
        except WorkerError as exc:
            raise BotFault(FaultKind.CRASH, f"worker did not start: {exc}"[:300]) from None
        self.cpu_base, self.idle_base = worker.cpu_seen, worker.idle_cpu
        start = GameStart(self.seed, info.seat, list(info.players), info.rules.to_dict(), info.game)
        reply = self._call(("game", *start), self.limits.load_seconds, "", "load limit")
        load_error, error = reply.load_error, reply.error
        if load_error is not None:
            self.worker.kill()
            raise BotFault(FaultKind.CRASH, f"could not load: {clean(load_error, 250)}")
        if error is not None:
            raise BotFault(FaultKind.EXCEPTION, clean(error, 300))

    def play_move(self) -> None:
        """Play the seat's move in the game process, through the seat's context."""
        table = self.table
        if table is None:
            raise BotFault(FaultKind.CRASH, "the seat has no context (the referee did not seat it)", retire=True)
        move = table.current_move()
        if self.pending_output:
            self._flush_output(table)
        worker = self.worker
        if worker is None or worker.dead:
            raise BotFault(FaultKind.CRASH, "the bot's worker is gone", retire=True)
        delta = self._delta(table) if self.history_on else None
        pile: tuple[bool, list[str]] | None = None
        if self.pile_on and not self.history_on:
            self.pile_mark, reset, cards = table.pile_since(self.pile_mark)
            pile = (reset, cards)
        # A move that must begin with a draw gets the stock's top card with its view (the
        # context's forced_draw: that card is the mover's in this move whatever it does).
        forced = table.forced_draw()
        prefetch = None if forced is None else forced._text
        # The MoveView's fields, in its order, as the plain tuple marshal sends (no NamedTuple made).
        view = (
            move.seat,
            [c._text for c in move.hand],
            move.top._text,
            move.suit,
            [c._text for c in move.put],
            move.first,
            move.stock,
            move.pile_size,
            table.counts(),
            delta,
            pile,
            prefetch,
        )
        budget = min(self.limits.move_seconds, max(self.bank, 0.0))
        self.idle = False
        self.said = self.acted = 0
        error: Any = None
        t0 = _clock()
        limit = self.limits.referee_turn_seconds
        try:
            start, cpu0 = worker.begin(budget)
        except WorkerError as exc:
            self._spent(worker, t0)
            raise self._fault(exc) from None
        try:
            worker.send(("move", view))
            if worker.frozen:
                worker.resume()
            recv, apply = worker.recv, self._apply
            while True:
                raw = recv()
                # parse_step, written out: [kind, actions, *rest]
                if type(raw) is not list or len(raw) < 2 or type(raw[1]) is not list:
                    raise ProtocolViolation("a malformed message")
                kind = raw[0]
                apply(raw[1], table, move, prefetch)
                if kind == "done":
                    if len(raw) != 3:
                        raise ProtocolViolation("a malformed done message")
                    error = raw[2]
                    break
                if len(raw) != 2:  # nothing rides on a request: every byte of it is accounted for
                    raise ProtocolViolation(f"a malformed {str(kind)[:20]!r} message")
                if kind == "draw":
                    if not table.live(move):
                        raise ProtocolViolation("a draw after the move ended")
                    try:
                        card = table.checked_draw()
                    except IllegalMove as exc:
                        raise ProtocolViolation(f"an illegal draw ({exc.rule})") from None
                    drawn = DrawnCard(card._text, move.stock, move.pile_size, self._delta(table))
                    worker.send(("card", *drawn))
                elif kind == "hist":
                    if self.history_on:  # a worker asks once a game; then it comes with every move
                        raise ProtocolViolation("the history asked for again")
                    self.history_on = True
                    self.sent = 0
                    worker.send(("hist", self._delta(table)))
                elif kind == "pile":
                    if self.pile_on or self.history_on:  # once a game, and never with the history
                        raise ProtocolViolation("the pile asked for again")
                    self.pile_on = True
                    self.pile_mark = (-1, 0)
                    worker.send(("pile", *self._pile(table)))
                else:
                    raise ProtocolViolation(f"an unknown message {str(kind)[:20]!r}")
                if _clock() - t0 > limit:
                    self.turn_referee = _clock() - t0
                    raise self._overload()
        except WorkerError as exc:
            in_time, _ = worker.end(start, cpu0, budget)
            self._spent(worker, t0)
            if not in_time or isinstance(exc, WorkerTimeout):
                exc = worker.late(budget, self.limits.move_seconds, "per-move limit")
            raise self._fault(exc) from None
        except BaseException:
            worker.end(start, cpu0, budget)
            self._spent(worker, t0)
            raise
        in_time, took = worker.end(start, cpu0, budget)
        self._spent(worker, t0)
        if not in_time:
            raise self._fault(worker.late(budget, self.limits.move_seconds, "per-move limit"))
        if self.turn_referee > limit:
            raise self._fault(self._overload())
        self.cpu_times.append(took)
        self.idle = True
        if error is None:
            return
        if type(error) is not str or len(error) > 1000:  # the worker's are at most 240 characters
            raise self._fault(ProtocolViolation("a malformed error field"))
        raise BotFault(FaultKind.EXCEPTION, clean(error, 300))

    def _spent(self, worker: GameProcess, t0: float | None = None) -> None:
        """The game's bank is what the game process has used in all (every turn, and between
        them) and the referee's CPU spent on the seat's turns (this one's from ``t0``)."""
        if t0 is not None:
            self.turn_referee = max(_clock() - t0, 0.0)  # a collection in another thread: never below 0
            self.referee_cpu += self.turn_referee
        self.cpu_total = worker.cpu_seen - self.cpu_base
        self.idle_cpu = worker.idle_cpu - self.idle_base
        self.frozen = worker.freezing
        self.bank = self.limits.game_seconds - self.cpu_total - self.referee_cpu

    def _delta(self, table: SeatContext) -> list[Any] | None:
        """The public events the worker has not seen yet (None until the bot reads the history)."""
        if not self.history_on:
            return None
        delta = table.history_since(self.sent)
        self.sent += len(delta)
        return delta

    def _pile(self, table: SeatContext) -> PileCards:
        """The round's cards put since the last ones sent (public, R10)."""
        self.pile_mark, reset, cards = table.pile_since(self.pile_mark)
        return PileCards(reset, cards)

    def _apply(self, actions: list[Any], table: SeatContext, move: Move, prefetch: str | None = None) -> None:
        """Re-apply the worker's actions through the engine's checked path."""
        self._count(actions)
        for action in actions:
            if type(action) is not list or not action:
                raise ProtocolViolation("bad action")
            kind = action[0]
            if kind == "o":
                if len(action) != 2 or type(action[1]) is not str:
                    raise ProtocolViolation("bad output action")
                text = self._cap_output(action[1])
                if text:
                    table.say(text, output=True)
                continue
            if not table.live(move):
                raise ProtocolViolation("action after the move ended")
            try:
                if kind == "p" and len(action) == 3:
                    card, suit = action[1], action[2]
                    if type(card) is not str or not (suit is None or type(suit) is str):
                        raise ProtocolViolation("bad put")
                    table.checked_put(_CARDS.get(card) or Card(card), suit)
                elif kind == "f" and len(action) == 1:
                    table.checked_finish()
                elif kind == "d" and len(action) == 2:
                    if prefetch is None or action[1] != prefetch or move.put or move.drew:
                        raise ProtocolViolation("a draw of a card it was not given")
                    if table.checked_draw()._text != prefetch:
                        raise ProtocolViolation("the drawn card is not the one sent")
                elif kind == "s" and len(action) == 2 and type(action[1]) is str:
                    self.said += 1
                    if self.said > SAYS_PER_MOVE:
                        raise ProtocolViolation(f"more than {SAYS_PER_MOVE} says in a move")
                    if len(action[1]) > SAY_CHARS:  # turn.say cuts its text to SAY_CHARS in the game process
                        raise ProtocolViolation(f"a say of {len(action[1])} characters")
                    table.say(clean(action[1], SAY_CHARS))
                else:
                    raise ProtocolViolation(f"unknown action {str(kind)[:10]!r}")
            except (IllegalMove, ValueError) as exc:
                if isinstance(exc, ProtocolViolation):
                    raise
                raise ProtocolViolation(f"illegal action {str(action)[:40]}: {exc}"[:200]) from None

    def end_round(self, result: RoundResult) -> None:
        if "end_round" in self.hooks:
            fields = RoundEnd(
                result.round, result.winner, list(result.points), list(result.scores), list(result.burned)
            )
            self._call(
                ("end_round", tuple(fields)),
                self.limits.move_seconds,
                "",
                "notification limit",
            )
            if self.pending_output and self.table is not None and not self.table.over:
                self._flush_output(self.table)

    def end_game(self, result: GameResult) -> None:
        if "end_game" in self.hooks:
            ended = GameEnd(list(result.scores), list(result.losers), list(result.places), result.rounds)
            self._call(
                ("end_game", tuple(ended)),
                self.limits.move_seconds,
                "",
                "notification limit",
            )
        self.pending_output.clear()  # nothing may follow the "end" line of a record

    def close(self) -> None:
        """The game is over: stop its process, or give it back to its stream (which stops it
        when it faulted fatally or cannot serve another game)."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        if self.stream is None:
            worker.kill()
        self._spent(worker)
        if self.stream is not None:
            self.stream.give_back(worker)
        self.factory.record(self)
