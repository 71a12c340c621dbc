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

from typing import TYPE_CHECKING, Any

from ...botapi.turn import SAY_CHARS, SAYS_PER_MOVE
from ...errors import IllegalMove
from ...game.cards import Card
from ...game.events import FaultKind
from ...game.referee import BotFault, GameInfo, SeatContext
from ..seat import OwnOutput, ProcessFactory, ProcessSeat, ProcessStream
from ..seat import referee_clock as _clock
from .process import GameProcess, Overload, ProtocolViolation, WorkerError, WorkerTimeout, clean
from .protocol import DrawnCard, GameEnd, GameStart, PileCards, RoundEnd, parse_ok

if TYPE_CHECKING:
    from ...game.engine import GameResult, RoundResult
    from ...game.moves import Move

#: Room for the worker's truncation mark beyond a game's output limit (the mark is 20 characters).
_MARK_ROOM = 32

#: Card texts exactly as the worker sends them (anything else goes through ``Card()`` and fails there).
_CARDS = Card._by_text


class SandboxedSeat(ProcessSeat[GameProcess]):
    """A sandboxed seat, as the referee drives it (the :class:`~arena.game.referee.RemoteSeat` protocol):
    the base's process, bank and faults (:class:`~arena.sandbox.seat.ProcessSeat`), with the
    marshal wire of a Python game process."""

    def __init__(
        self,
        factory: ProcessFactory[GameProcess],
        bot_key: Any,
        seat: int,
        stream: ProcessStream[GameProcess] | None = None,
    ) -> None:
        super().__init__(factory, bot_key, seat, stream)
        #: The process's CPU seconds between turns before this game: the game's are the rest.
        self.idle_base = 0.0
        self.hooks: tuple[str, ...] = ()
        self.sent = 0
        self.history_on = False
        #: Whether the worker asked for the pile alone, and the (round, cards) of it already sent.
        self.pile_on = False
        self.pile_mark = (-1, 0)
        self.output_left = self.limits.max_output_bytes
        self.output = OwnOutput(last=False)  # the first prints, as its sandbox keeps them
        self.pending_output: list[str] = []
        self.idle = False
        self.said = 0
        #: CPU seconds the game process used between turns.
        self.idle_cpu = 0.0
        #: Whether its game process was being stopped between turns (see ``Limits.freeze_after``).
        self.frozen = False

    # -- helpers ---------------------------------------------------------------------------
    def _timeout_text(self, exc: WorkerError) -> str:
        # A process that stopped answering (killed past the backstop) ran over, whatever it says.
        text = str(exc)
        return text if isinstance(exc, Overload) or text.startswith(("over", "used")) else "over the time limit"

    def _billed(self) -> str:
        return f"; referee CPU {self.turn_referee * 1e3:.2f} ms"

    def _charged(self) -> float:
        return self.referee_cpu  # the referee's CPU on the seat's turns is the seat's

    def _call(self, message: tuple[Any, ...], seconds: float, what: str = "", label: str = "per-move limit") -> Any:
        worker = self._live()
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

    def _keep_output(self, actions: list[Any]) -> None:
        """Output printed outside a move: kept until it can join the game record."""
        self._count(len(actions))
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
        self.output.add(kept)  # its author's copy: the record keeps the table's share of it (R10)
        if len(kept) < len(text):
            self.output.note = f"[printed output past {self.limits.max_output_bytes} characters a game is not kept]"
        return kept

    def _flush_output(self, table: SeatContext) -> None:
        for text in self.pending_output:
            table.say(text, output=True)
        self.pending_output.clear()

    # -- the RemoteSeat protocol -----------------------------------------------------------
    def start_game(self, info: GameInfo) -> None:
        self.seat = info.seat
        worker = self._take()
        self.idle_base = worker.idle_cpu
        start = GameStart(self.seed, info.seat, list(info.players), info.rules.to_dict(), info.game)
        reply = self._call(("game", *start), self.limits.load_seconds, "", "load limit")
        load_error, error = reply.load_error, reply.error
        if load_error is not None:
            worker.kill()
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
        worker = self._live()
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
        budget = self._budget()
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
        super()._spent(worker, t0)
        self.idle_cpu = worker.idle_cpu - self.idle_base
        self.frozen = worker.freezing

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
        self._count(len(actions))
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
