"""Layer 2, the game process: the protocol loop that runs one bot for one game.

A game process is forked from the bot's template (:mod:`arena.sandbox.python.zygote`),
which has imported everything, taken the first hardening layers and compiled the
bot under the code policy (layer 1, :mod:`arena.sandbox.policy.compiler`). The game
process takes the remaining layers (:func:`arena.sandbox.jail.harden.harden_child`:
its own uid, rlimits, no_new_privs, seccomp), then serves one game, or a
*stream* of games that share no deal (:class:`~arena.sandbox.python.factory.Stream`):
each game runs the bot's module in a fresh namespace and makes a fresh ``Bot``,
so a bot under the code policy remembers nothing from one game to the next.

The worker holds only its seat's view (R10), sent as plain data each move.
It builds a local :class:`~arena.game.moves.Move` and a data-backed table, so the
bot gets a real :class:`~arena.botapi.turn.Turn` and its puts are checked locally;
it asks the referee only to draw a card (and, when the bot first reads
``turn.history``, for the public history, then sent as deltas with every
move; when it reads only ``turn.pile``, for the pile alone, then sent as the
cards put since). The history is kept as the plain data the referee
sent and the round's pile is kept from it as events arrive (:class:`Feed`),
so ``turn.pile`` is a copy and ``turn.history`` makes each event read-only
once, on first read. Whatever the bot raises is reported, never propagated:
the protocol loop survives ``SystemExit``, ``KeyboardInterrupt``,
``MemoryError`` and ``RecursionError``.
"""

from __future__ import annotations

import builtins
import json
import json.encoder
import marshal
import os
from typing import Any

from ...botapi.turn import PlayerInfo, Turn, freeze
from ...errors import BotLoadError, IllegalMove
from ...game.cards import Card
from ...game.engine import GameResult, RoundResult
from ...game.moves import Move
from ...game.referee import GameInfo
from ...game.rules import Rules
from ...trust.botsource import BotSource
from ..policy.compiler import OutputSink, _short, instantiate
from .protocol import HEADER, MAX_IN_FRAME, DrawnCard, GameEnd, GameStart, PileCards, RoundEnd

HOOKS = ("start_game", "end_round", "end_game")
_CARD = Card._by_text
_CARD_OF = _CARD.__getitem__
_dumps = json.JSONEncoder(separators=(",", ":")).encode
try:  # the C encoder, made once (JSONEncoder.encode builds a new one per call)
    _c_encode = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
        None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )

    def _encode(message: Any) -> bytes:
        return "".join(_c_encode(message, 0)).encode()
except (AttributeError, TypeError):  # no C accelerator: the plain encoder

    def _encode(message: Any) -> bytes:
        return _dumps(message).encode()


#: Bytes asked of the pipe per read: replies and views are small, and a 64 KiB buffer
#: allocated and shrunk per read costs more than the rare extra read of a long message.
_CHUNK = 4096


def _exit(code: int) -> None:
    os._exit(code)


class Channel:
    """The worker's end of the two pipes (reads are buffered: one system call per message)."""

    __slots__ = ("fd_in", "fd_out", "buf")

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.buf = b""

    def _fill(self, n: int) -> None:
        buf = self.buf
        while len(buf) < n:
            data = os.read(self.fd_in, max(n - len(buf), _CHUNK))
            if not data:
                _exit(0)  # the referee is gone
            buf += data
        self.buf = buf

    def recv(self) -> Any:
        if len(self.buf) < 4:
            self._fill(4)
        (size,) = HEADER.unpack_from(self.buf)
        if size > MAX_IN_FRAME:
            _exit(3)
        end = 4 + size
        if len(self.buf) < end:
            self._fill(end)
        buf = self.buf
        self.buf = buf[end:]
        return marshal.loads(buf[4:end])

    def send(self, message: Any) -> None:
        payload = _encode(message)
        data = HEADER.pack(len(payload)) + payload
        n = os.write(self.fd_out, data)
        if n < len(data):  # a long message: the rest in as many writes as the pipe needs
            view = memoryview(data)[n:]
            while view:
                n = os.write(self.fd_out, view)
                view = view[n:]


class ViewTable:
    """One move's table (the :class:`~arena.botapi.turn.Table` protocol), backed by the view's data.

    Closed when the move ends, so a bot that keeps the ``turn`` cannot act later.
    """

    __slots__ = ("w", "move", "counts", "open", "prefetch", "rules", "held", "seats")

    def __init__(self, worker: GameLoop, move: Move, counts: Any, prefetch: str | None) -> None:
        self.w = worker
        self.move = move
        self.counts = counts
        self.open = True
        #: The stock's top card, sent when the move must begin with a draw (see SandboxedSeat.move).
        self.prefetch = prefetch
        self.rules: Rules = worker.rules
        #: ``players()`` as last made, and the mover's hand size it was made with (-2: never).
        self.held = -2
        self.seats: tuple[PlayerInfo, ...] = ()

    def _check(self) -> None:
        if not self.open:
            raise IllegalMove("R2.1", "it is not your move")

    def players(self) -> tuple[PlayerInfo, ...]:
        held = len(self.move.hand) if self.open else -1
        if held == self.held:  # bots ask several times a move: made again only when the hand changed
            return self.seats
        names, counts, n = self.w.names, self.counts, len(self.w.names)
        seat = self.move.seat
        seats = tuple(
            PlayerInfo(s, names[s], held if s == seat and held >= 0 else counts[s], counts[n + s], counts[2 * n + s])
            for s in range(n)
        )
        self.held, self.seats = held, seats
        return seats

    def history(self) -> tuple[Any, ...]:
        feed = self.w.feed
        if not feed.on and self.open:
            self.w.ask_history()
        return feed.history()

    def pile(self) -> tuple[Card, ...]:
        feed = self.w.feed
        if not feed.on and not feed.pile_on and self.open:
            self.w.ask_pile()
        return feed.pile()

    def act_put(self, card: Card, suit: str | None) -> None:
        self._check()
        move = self.move
        move.hand.remove(card)
        move.put.append(card)
        move.top = card
        ordered = (suit if suit is not None else card.suit) if card.rank == "j" else None
        move.suit = ordered or card.suit
        move.pile_size += 1
        w = self.w
        w.act(["p", card._text, suit])
        feed = w.feed
        if feed.on:
            event = {"event": "put", "seat": move.seat, "card": card._text}
            if ordered is not None:
                event["suit"] = ordered
            feed.provisional(event, card)
        elif feed.pile_on:
            feed.prov_cards.append(card)

    def act_draw(self) -> Card:
        self._check()
        w = self.w
        move = self.move
        if self.prefetch is not None and not move.put and not move.drew:
            card = _CARD[self.prefetch]
            self.prefetch = None
            w.act(["d", card._text])
            move.drew = True
            move.hand.append(card)
            move.stock -= 1
            if w.feed.on:
                w.feed.provisional({"event": "draw", "seat": move.seat})
            return card
        self.prefetch = None
        reply = w.request(["draw", w.take_actions()])
        if type(reply) is not tuple or reply[0] != "card":
            _exit(3)
        drawn = DrawnCard._make(reply[1:])
        if drawn.history is not None:
            w.feed.add(drawn.history)
        card = _CARD[drawn.card]
        if not move.put:
            move.drew = True
        move.hand.append(card)
        move.stock = drawn.stock
        move.pile_size = drawn.pile_size
        return card

    def act_finish(self) -> None:
        self._check()
        self.move.finished = True
        w = self.w
        w.act(["f"])
        if w.feed.on:
            w.feed.provisional({"event": "finish", "seat": self.move.seat})

    def act_say(self, text: str) -> None:
        self._check()
        w = self.w
        w.act(["s", text])
        if w.feed.on:
            w.feed.provisional({"event": "say", "seat": self.move.seat, "text": text})


class Feed:
    """The public history as this worker has it (R10), and the round's pile kept from it.

    Events arrive as plain data from the referee (trusted) and are kept so; they
    are made read-only (:func:`~arena.botapi.turn.freeze`) only when the bot reads
    ``turn.history``, once each. The pile is kept as events arrive, so
    ``turn.pile`` costs a copy, not a walk over the whole history. Events of
    the move in progress (the bot's own actions, before the referee has
    logged them) are *provisional*: replaced by the logged ones with the next
    delta. A bot that reads ``turn.pile`` but not ``turn.history`` gets the pile
    alone (:meth:`add_pile`: the cards put since its last view), which costs the
    referee no public events at all; its first read of the history brings the
    whole history, and the pile is kept from the events again.
    """

    __slots__ = ("on", "pile_on", "events", "frozen", "cards", "prov", "prov_cards")

    def __init__(self) -> None:
        #: Whether the referee sends the history (from the bot's first read of it on).
        self.on = False
        #: Whether it sends the pile alone (the bot read the pile, not yet the history).
        self.pile_on = False
        self.events: list[dict[str, Any]] = []
        self.frozen: list[Any] = []
        self.cards: list[Card] = []
        self.prov: list[dict[str, Any]] = []
        self.prov_cards: list[Card] = []

    def add(self, delta: list[dict[str, Any]]) -> None:
        """Logged events after those already held (the provisional ones among them)."""
        self.prov.clear()
        self.prov_cards.clear()
        self.events.extend(delta)
        cards = self.cards
        for e in delta:
            kind = e["event"]
            if kind == "put":
                cards.append(_CARD[e["card"]])
            elif kind == "deal":
                cards.clear()

    def add_pile(self, reset: bool, cards: list[str]) -> None:
        """Cards put since the last ones held (all of a new round's when ``reset``): the pile
        alone, for a bot that reads it and not the history."""
        self.prov.clear()
        self.prov_cards.clear()
        if reset:
            self.cards.clear()
        self.cards.extend(map(_CARD_OF, cards))

    def provisional(self, event: dict[str, Any], card: Card | None = None) -> None:
        """One of the bot's own actions in the move in progress (``card``: the card it put)."""
        self.prov.append(event)
        if card is not None:
            self.prov_cards.append(card)

    def end_move(self) -> None:
        self.prov.clear()
        self.prov_cards.clear()

    def history(self) -> tuple[Any, ...]:
        frozen, events = self.frozen, self.events
        if len(frozen) < len(events):
            frozen.extend(freeze(e) for e in events[len(frozen) :])
        if self.prov:  # read-only as every event a bot gets: through freeze (no ``_`` key at any depth)
            return tuple(frozen) + tuple(freeze(e) for e in self.prov)
        return tuple(frozen)

    def pile(self) -> tuple[Card, ...]:
        return tuple(self.cards + self.prov_cards) if self.prov_cards else tuple(self.cards)


class GameLoop:
    """The protocol loop and one bot's state."""

    def __init__(self, chan: Channel, hello: dict[str, Any], code: Any = None) -> None:
        self.chan = chan
        self.src = BotSource(hello["name"], hello["source"], hello.get("path"))
        self.games = 0
        self.sink = OutputSink(int(hello.get("max_output", 4096)))
        self.raw_ok = bool(hello.get("raw_ok"))
        #: Tests only: run the bot without layer 1, as if it had escaped the code policy.
        self.escaped = bool(hello.get("raw_ok") and hello.get("escaped"))
        self.code: Any = code
        #: The bot's namespace when the template built it before the fork (else made per game).
        self.space: Any = None
        self.bot: Any = None
        self.hooks: dict[str, Any] = {}
        self.rules: Rules = Rules()
        self.rules_key: Any = None
        self.names: tuple[str, ...] = ()
        self.actions: list[Any] = []
        self.feed = Feed()

    # -- actions and requests -------------------------------------------------------------
    def act(self, action: list[Any]) -> None:
        sink = self.sink
        if sink.parts or sink.truncated:  # printed output first, in order
            out = sink.take()
            if out:
                self.actions.append(["o", out])
        self.actions.append(action)

    def take_actions(self) -> list[Any]:
        out = self.sink.take()
        if out:
            self.actions.append(["o", out])
        actions, self.actions = self.actions, []
        return actions

    def request(self, message: list[Any]) -> Any:
        """One round trip to the referee within a move: ``message``, then its answer."""
        self.chan.send(message)
        return self.chan.recv()

    def ask_history(self) -> None:
        """The bot reads the history for the first time: ask for it (sent with every move from now on)."""
        reply = self.request(["hist", self.take_actions()])
        if type(reply) is not tuple or len(reply) != 2 or reply[0] != "hist":
            _exit(3)
        feed = self.feed
        feed.cards.clear()  # the whole history comes, the pile with it
        feed.add(reply[1])
        feed.on, feed.pile_on = True, False

    def ask_pile(self) -> None:
        """The bot reads the pile (not the history) for the first time: ask for the pile alone
        (its new cards sent with every move from now on)."""
        reply = self.request(["pile", self.take_actions()])
        if type(reply) is not tuple or reply[0] != "pile":
            _exit(3)
        self.feed.add_pile(*PileCards._make(reply[1:]))
        self.feed.pile_on = True

    # -- messages ------------------------------------------------------------------------------
    def on_game(self, seed: int, seat: int, names: Any, rules: Any, game_id: str) -> list[Any]:
        self.games += 1
        # A stream plays game after game in this process (never two of one deal): each game
        # gets a fresh module namespace and a fresh Bot; the first takes the one the template built.
        space, self.space = self.space, None
        self.sink.reset()
        self.bot = None
        self.hooks = {}
        self.feed = Feed()
        self.actions = []
        try:
            if self.escaped:
                self.bot = _instantiate_escaped(self.code)
            else:
                self.bot = instantiate(self.code, self.src, seed, self.sink, space)
        except BotLoadError as exc:
            return ["ok", self.take_actions(), None, exc.message, []]
        key = marshal.dumps(rules)
        if key != self.rules_key:
            self.rules = Rules.from_dict(rules)
            self.rules_key = key
        self.names = tuple(names)
        for name in HOOKS:
            try:
                fn = getattr(self.bot, name, None)
            except BaseException:  # noqa: BLE001
                fn = None
            if callable(fn):
                self.hooks[name] = fn
        error = None
        if "start_game" in self.hooks:
            error = self.call(self.hooks["start_game"], GameInfo(seat, self.names, self.rules, game_id))
        return ["ok", self.take_actions(), error, None, sorted(self.hooks)]

    def call(self, fn: Any, arg: Any) -> str | None:
        """Call a bot method; its exception (any at all) as a short text, or None."""
        try:
            fn(arg)
        except BaseException as exc:  # noqa: BLE001 - nothing a bot raises escapes
            return _short(exc)
        return None

    def on_move(self, fields: tuple[Any, ...]) -> list[Any]:
        # A MoveView's fields (the referee's plain tuple), unpacked without making the NamedTuple.
        seat, hand, top, suit, put, first, stock, pile_size, counts, history, pile, forced = fields
        feed = self.feed
        if history is not None:
            feed.add(history)
        elif pile is not None:
            feed.add_pile(*pile)
        card = _CARD_OF
        move = Move(seat, list(map(card, hand)), card(top), suit, list(map(card, put)), stock, pile_size, first)
        table = ViewTable(self, move, counts, forced)
        self.actions = []
        error = None
        try:
            self.bot.move(Turn(move, table))
        except BaseException as exc:  # noqa: BLE001 - nothing a bot raises escapes
            error = _short(exc)
        table.open = False
        if feed.prov or feed.prov_cards:
            feed.end_move()
        sink = self.sink
        if sink.parts or sink.truncated:  # printed output last (take_actions), else the actions alone
            return ["done", self.take_actions(), error]
        actions, self.actions = self.actions, []
        return ["done", actions, error]

    def on_notify(self, kind: str, fields: Any) -> list[Any]:
        self.actions = []
        error = None
        fn = self.hooks.get(kind)
        if fn is not None:
            # Sequences arrive as lists; the results hold tuples, as in the referee's process.
            result: RoundResult | GameResult
            if kind == "end_round":
                r = RoundEnd._make(fields)
                result = RoundResult(r.round, r.winner, tuple(r.points), tuple(r.scores), tuple(r.burned))
            else:
                g = GameEnd._make(fields)
                result = GameResult(tuple(g.scores), tuple(g.losers), tuple(g.places), g.rounds)
            error = self.call(fn, result)
        return ["ok", self.take_actions(), error, None, sorted(self.hooks)]

    def on_raw(self, code: str) -> list[Any]:
        """Tests only: run unrestricted code here, as if a bot had escaped layer 1."""
        if not self.raw_ok:
            _exit(3)
        ns: dict[str, Any] = {"__builtins__": builtins, "result": None}
        try:
            exec(code, ns)
            return ["raw", repr(ns.get("result"))[:2000]]
        except BaseException as exc:  # noqa: BLE001
            return ["raw", f"raised {type(exc).__name__}: {exc}"[:2000]]

    def loop(self) -> None:
        chan = self.chan
        while True:
            msg = chan.recv()
            kind = msg[0]
            if kind == "move":
                reply = self.on_move(msg[1])
            elif kind == "game":
                reply = self.on_game(*GameStart._make(msg[1:]))
            elif kind in ("end_round", "end_game"):
                reply = self.on_notify(kind, msg[1])
            elif kind == "raw":
                reply = self.on_raw(msg[1])
            else:
                _exit(3)
            chan.send(reply)


def _instantiate_escaped(code: Any) -> Any:
    """Tests only: the bot's module run with the real builtins (no code policy at all)."""
    ns: dict[str, Any] = {"__builtins__": builtins, "__name__": "bot"}
    try:
        exec(code, ns)
        return ns["Bot"]()
    except BaseException as exc:  # noqa: BLE001
        raise BotLoadError(f"error while loading: {_short(exc)}") from None
