"""The referee's player for a sandboxed seat (:class:`WorkerPlayer`), and the public history it sends.

A :class:`WorkerPlayer` gets a fresh game process from its bot's
:class:`~arena.sandbox.pool.SandboxFactory` for each game, sends the seat's
view each move, re-applies every action the process reports through the
engine's checked path, and turns every misbehaviour into a
:class:`~arena.referee.BotFault`. Each call is one *turn* of the process
(:meth:`~arena.sandbox.process.WorkerProcess.begin` ... ``end``): continued
while it is on turn, frozen otherwise, timed by its CPU clock.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from ..cards import Card
from ..engine import Game, derive_seed
from ..errors import IllegalMove
from ..referee import BotFault, GameInfo
from ..turn import Turn, public_data
from .process import ProtocolViolation, WorkerError, WorkerProcess, WorkerTimeout, clean

if TYPE_CHECKING:
    from .pool import SandboxFactory

#: Card texts exactly as the worker sends them (anything else goes through ``Card()`` and fails there).
_CARDS = Card._by_text

# -- the public history, as sandboxed bots get it ------------------------------------------

# Per game: [game, public events so far, log entries they cover], for the few
# most recent games, keyed by id() and holding the game itself (so an id is
# never reused while cached). Not a WeakKeyDictionary: a compiled Game
# (arena/native.py) takes no weak references.
_PUBLIC: OrderedDict[int, list[Any]] = OrderedDict()
_PUBLIC_GAMES = 16


def public_log(game: Game) -> list[dict[str, Any]]:
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
    return events  # type: ignore[no-any-return]


# -- the player ------------------------------------------------------------------------------


class WorkerPlayer:
    """A sandboxed seat, as the referee drives it (the :class:`~arena.referee.Player` protocol)."""

    def __init__(self, factory: SandboxFactory, game_seed: Any, seat: int) -> None:
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
        if isinstance(exc, WorkerTimeout):
            why = str(exc) if str(exc).startswith(("over", "used")) else "over the time limit"
            return BotFault("timeout", f"{what}{why}; worker stopped", retire=True)
        if isinstance(exc, ProtocolViolation):
            return BotFault("crash", f"{what}protocol violation: {detail}"[:300])
        return BotFault("crash", f"{what}{detail}"[:300])

    def _call(self, message: Any, seconds: float, what: str = "", label: str = "per-move limit") -> Any:
        worker = self.worker
        if worker is None or worker.dead:
            raise BotFault("crash", "the bot's worker is gone", retire=True)
        self.idle = False
        try:
            reply, _ = worker.call(message, min(seconds, max(self.bank, 0.0)), seconds, label)
        except WorkerError as exc:
            self._spent(worker)
            raise self._fault(exc, what) from None
        self._spent(worker)
        if not (type(reply) is list and len(reply) in (5, 6) and reply[0] == "ok" and type(reply[1]) is list):
            raise self._fault(ProtocolViolation("bad reply to a notification"), what)
        self.idle = True
        hooks = reply[4]
        if type(hooks) is list and all(type(h) is str for h in hooks):
            self.hooks = tuple(hooks)
        self._keep_output(reply[1])
        return reply

    def _keep_output(self, actions: list[Any]) -> None:
        """Output printed outside a move: kept until it can join the game record."""
        for action in actions:
            if type(action) is list and len(action) == 2 and action[0] == "o" and type(action[1]) is str:
                text = self._cap_output(action[1])
                if text:
                    self.pending_output.append(text)
            else:
                raise self._fault(ProtocolViolation("an action outside a move"))

    def _cap_output(self, text: Any) -> str:
        kept = clean(text, max(self.output_left, 0))
        self.output_left -= len(kept)
        return kept

    def _flush_output(self, game: Game, seat: int) -> None:
        for text in self.pending_output:
            game.say(seat, text, output=True)
        self.pending_output.clear()

    # -- the Player protocol ---------------------------------------------------------------
    def start_game(self, info: GameInfo) -> None:
        self.seat = info.seat
        try:
            self.worker = self.factory.spawn()
        except WorkerError as exc:
            raise BotFault("crash", f"worker did not start: {exc}"[:300]) from None
        reply = self._call(
            ("game", self.seed, info.seat, list(info.players), info.rules.to_dict(), info.game),
            self.limits.load_seconds,
            "",
            "load limit",
        )
        if len(reply) == 6 and type(reply[5]) is dict:
            self.worker.report = reply[5]
        load_error, error = reply[3], reply[2]
        if load_error is not None:
            self.worker.kill()
            raise BotFault("crash", f"could not load: {clean(load_error, 250)}")
        if error is not None:
            raise BotFault("exception", clean(error, 300))

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
        view = (
            seat,
            [c._text for c in hand],
            move.top._text,
            move.suit,
            [c._text for c in move.put],
            move.first,
            move.stock,
            move.pile_size,
            [len(h) for h in game.hands] + game.scores + game.skips,
            delta,
            prefetch,
        )
        budget = min(self.limits.move_seconds, max(self.bank, 0.0))
        self.idle = False
        self.said = 0
        error: Any = None
        try:
            start, cpu0 = worker.begin(budget)
        except WorkerError as exc:
            self._spent(worker)
            raise self._fault(exc) from None
        try:
            worker.send(("move", view))
            worker.resume()
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
            in_time, _ = worker.end(start, cpu0, budget)
            self._spent(worker)
            if not in_time or isinstance(exc, WorkerTimeout):
                exc = worker.late(budget, self.limits.move_seconds, "per-move limit")
            raise self._fault(exc) from None
        except BaseException:
            worker.end(start, cpu0, budget)
            raise
        in_time, took = worker.end(start, cpu0, budget)
        self._spent(worker)
        if not in_time:
            raise self._fault(worker.late(budget, self.limits.move_seconds, "per-move limit"))
        self.cpu_times.append(took)
        self.idle = True
        if error is None:
            return
        if type(error) is not str:
            raise self._fault(ProtocolViolation("a malformed error field"))
        raise BotFault("exception", clean(error, 300))

    def _spent(self, worker: WorkerProcess) -> None:
        """The game's bank is what the game process has used in all: every turn, and between them."""
        self.cpu_total = worker.cpu_seen
        self.idle_cpu = worker.idle_cpu
        self.frozen = worker.freezing
        self.bank = self.limits.game_seconds - worker.cpu_seen

    def _delta(self, game: Game) -> list[Any] | None:
        """The public events the worker has not seen yet (None until the bot reads the history)."""
        if not self.history_on:
            return None
        events = public_log(game)
        delta = events[self.sent :]
        self.sent = len(events)
        return delta

    def _apply(self, actions: list[Any], game: Game, move: Any, seat: int, prefetch: str | None = None) -> None:
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
                    game.say(seat, clean(action[1], 200))
                else:
                    raise ProtocolViolation(f"unknown action {str(kind)[:10]!r}")
            except (IllegalMove, ValueError) as exc:
                if isinstance(exc, ProtocolViolation):
                    raise
                raise ProtocolViolation(f"illegal action {str(action)[:40]}: {exc}"[:200]) from None

    def end_round(self, result: Any) -> None:
        if "end_round" in self.hooks:
            self._call(
                (
                    "end_round",
                    [result.round, result.winner, list(result.points), list(result.scores), list(result.burned)],
                ),
                self.limits.move_seconds,
                "",
                "notification limit",
            )
            if self.pending_output and self.game is not None and not self.game.over:
                self._flush_output(self.game, self.seat)

    def end_game(self, result: Any) -> None:
        if "end_game" in self.hooks:
            self._call(
                ("end_game", [list(result.scores), list(result.losers), list(result.places), result.rounds]),
                self.limits.move_seconds,
                "",
                "notification limit",
            )
        self.pending_output.clear()  # nothing may follow the "end" line of a record

    def close(self) -> None:
        """Stop the game process: a process serves one game only (nothing a bot did survives it)."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        worker.kill()
        self._spent(worker)
        self.factory.record(self)
