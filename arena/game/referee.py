"""The referee: runs one game between 2 and 6 seats and applies the fault policy.

Two kinds of seat, each with its own protocol. A :class:`Player` is played in
the referee's process: for each of its moves the referee builds a
:class:`~arena.botapi.turn.Turn` over the engine's move and the player acts through
it. A :class:`RemoteSeat` is played elsewhere (a sandboxed bot): it gets its
:class:`SeatContext` once, before the game, and plays each move through it
(``play_move()``; no ``Turn`` is built for it). Either way the referee
completes a move with :func:`fallback_move` when the seat faults
(docs/bot-api.md, "Faults").
"""

from __future__ import annotations

import json
import random
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..botapi.turn import PlayerInfo, PublicFeed, Turn
from ..errors import IllegalMove
from .cards import Card
from .engine import Game, GameResult, RoundResult, derive_seed
from .events import FaultEvent, FaultKind, GameEvent
from .fallback import fallback_move
from .moves import Move
from .rules import CONTEST, Rules

#: Every fault kind, as records hold them (:class:`~arena.game.events.FaultKind`).
FAULT_KINDS: tuple[FaultKind, ...] = tuple(FaultKind)


class BotFault(Exception):
    """Raised by a player whose bot misbehaved in a way only its runtime can see
    (``timeout``, ``crash``...). ``kind`` is a :class:`~arena.game.events.FaultKind` (or its value)."""

    def __init__(self, kind: FaultKind | str, detail: str, *, retire: bool = False) -> None:
        self.kind = FaultKind(kind)
        super().__init__(f"{self.kind}: {detail}")
        self.detail = detail
        #: Retire the bot now, whatever its fault count (a sandbox worker killed after a timeout).
        self.retire = retire


class GameInfo(NamedTuple):
    """What ``start_game(game)`` receives."""

    seat: int
    players: tuple[str, ...]
    rules: Rules
    game: str


class Player(Protocol):
    """A seat played in the referee's process: it acts through the ``Turn`` of each of its moves."""

    name: str

    def start_game(self, info: GameInfo) -> None: ...
    def move(self, turn: Turn) -> None: ...
    def end_round(self, result: RoundResult) -> None: ...
    def end_game(self, result: GameResult) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class RemoteSeat(Protocol):
    """A seat played outside the referee's process (:class:`~arena.sandbox.python.seat.SandboxedSeat`).

    What the referee calls on it, in order: :meth:`sit` with the seat's
    :class:`SeatContext` (before the game), ``start_game``, :meth:`play_move` on each
    of the seat's moves, ``end_round``, ``end_game``, ``close``. It sees the game only
    through the context and acts only through the context's checked path; what only
    its runtime can see (a timeout, a crash) it raises as :class:`BotFault`.
    """

    name: str

    def sit(self, context: SeatContext) -> None: ...
    def start_game(self, info: GameInfo) -> None: ...
    def play_move(self) -> None: ...
    def end_round(self, result: RoundResult) -> None: ...
    def end_game(self, result: GameResult) -> None: ...
    def close(self) -> None: ...


#: Whatever sits at a seat.
Seat = Player | RemoteSeat

#: Per class of seat, whether it is a RemoteSeat (a runtime protocol check costs microseconds: once a class).
_remote_classes: dict[type, bool] = {}


def is_remote(seat: Seat) -> bool:
    """Whether ``seat`` is played outside the referee's process (the :class:`RemoteSeat` protocol)."""
    kind = type(seat)
    known = _remote_classes.get(kind)
    if known is None:
        known = _remote_classes[kind] = isinstance(seat, RemoteSeat)
    return known


@dataclass(frozen=True)
class Fault:
    """One recorded misbehaviour."""

    seat: int
    kind: FaultKind
    detail: str
    round: int


@dataclass
class GameOutcome:
    """Everything a table of results needs from one game."""

    game: str
    seed: Any
    names: tuple[str, ...]
    result: GameResult
    faults: list[Fault] = field(default_factory=list)
    retired: frozenset[int] = frozenset()
    move_times: list[list[float]] = field(default_factory=list)
    moves: int = 0
    duration: float = 0.0
    #: The full game record (docs/record-format.md events), hidden cards included.
    log: list[dict[str, Any]] = field(default_factory=list)
    #: Each seat's own output for its author (a sandboxed bot's prints, a program's standard error;
    #: "" for none), bounded: filled by :class:`~arena.seats.seating.Seating`, never part of the record.
    outputs: list[str] = field(default_factory=list)

    def fault_counts(self) -> list[int]:
        counts = [0] * len(self.names)
        for f in self.faults:
            if f.kind is not FaultKind.RETIRED:
                counts[f.seat] += 1
        return counts


class SeatContext(Protocol):
    """What a seat played from outside the referee's process needs, and nothing more.

    The referee hands one to each :class:`RemoteSeat` (a sandboxed seat,
    :class:`~arena.sandbox.python.seat.SandboxedSeat`) before ``start_game``.
    It shows the seat's own move, the public counts and history (R10), and the
    card a forced draw would give, to the mover only (docs/RULINGS.md); every
    action goes through the engine's checked path. No engine object escapes it
    but the seat's own :class:`~arena.game.moves.Move`.
    """

    seat: int
    rules: Rules

    def current_move(self) -> Move: ...
    def live(self, move: Move) -> bool: ...
    def counts(self) -> list[int]: ...
    def history_since(self, mark: int) -> list[dict[str, Any]]: ...
    def pile_since(self, mark: tuple[int, int]) -> tuple[tuple[int, int], bool, list[str]]: ...
    def forced_draw(self) -> Card | None: ...
    def say(self, text: str, output: bool = False) -> None: ...
    def checked_put(self, card: Card, suit: str | None) -> None: ...
    def checked_draw(self) -> Card: ...
    def checked_finish(self) -> None: ...
    @property
    def over(self) -> bool: ...


class EngineTable:
    """A seat's view of an in-process game: the :class:`~arena.botapi.turn.Table` protocol for a
    :class:`~arena.botapi.turn.Turn`, and the :class:`SeatContext` for a seat played elsewhere."""

    __slots__ = ("game", "seat", "names", "rules", "shared")

    def __init__(self, game: Game, seat: int, names: Sequence[str], shared: PublicFeed | None = None) -> None:
        self.game = game
        self.seat = seat
        self.names = tuple(names)
        self.rules = game.rules
        #: The public history, shared by the seats of one game (a table of its own when not given).
        self.shared = shared if isinstance(shared, PublicFeed) else PublicFeed()

    def players(self) -> tuple[PlayerInfo, ...]:
        g = self.game
        return tuple(PlayerInfo(s, self.names[s], len(g.hands[s]), g.scores[s], g.skips[s]) for s in range(g.n))

    def pile(self) -> tuple[Card, ...]:
        return tuple(self.game.round_pile)

    def history(self) -> tuple[Mapping[str, Any], ...]:
        return self.shared.update(self.game.log)

    def _mine(self) -> Game:
        """The game, when this seat's move is in progress (R2.1)."""
        game = self.game
        if game.mover != self.seat or game.move.finished or not game.in_round:
            raise IllegalMove("R2.1", "it is not your move")
        return game

    # The Turn has checked each action against the move in progress, which
    # for an in-process bot is the engine's own Move: apply it unchecked.
    # (The mover check is written out in each: these are the in-process hot path.)
    def act_put(self, card: Card, suit: str | None) -> None:
        game = self.game
        if game.mover != self.seat or game.move.finished or not game.in_round:
            raise IllegalMove("R2.1", "it is not your move")
        game.put_unchecked(card, suit)

    def act_draw(self) -> Card:
        game = self.game
        if game.mover != self.seat or game.move.finished or not game.in_round:
            raise IllegalMove("R2.1", "it is not your move")
        return game.draw_unchecked()

    def act_finish(self) -> None:
        game = self.game
        if game.mover != self.seat or game.move.finished or not game.in_round:
            raise IllegalMove("R2.1", "it is not your move")
        game.finish_unchecked()

    def act_say(self, text: str) -> None:
        self.game.say(self.seat, text)  # capped per seat and game there, as for sandboxed bots

    # -- the SeatContext: a seat played in another process ----------------------------
    def current_move(self) -> Move:
        """This seat's move in progress (its own hand, top, suit, puts, counts)."""
        game = self._mine()
        return game.move

    def live(self, move: Move) -> bool:
        """Whether ``move`` is still the move in progress and may take actions."""
        game = self.game
        return game.move is move and not move.finished and game.in_round

    def counts(self) -> list[int]:
        """Cards held per seat, then scores, then skips owed (R10: everyone sees them)."""
        g = self.game
        return [len(h) for h in g.hands] + g.scores + g.skips

    def history_since(self, mark: int) -> list[dict[str, Any]]:
        """The public events from index ``mark`` on, as plain data shared by the game's seats (do not change)."""
        return self.shared.data_since(self.game.log, mark)

    def pile_since(self, mark: tuple[int, int]) -> tuple[tuple[int, int], bool, list[str]]:
        """The cards put this round (R10: the pile is public) after the first ``mark[1]`` of
        round ``mark[0]``, as texts, with the new mark; ``reset``: the round is not ``mark``'s,
        and the cards are all of this round's."""
        g = self.game
        pile = g.round_pile
        new = (g.round, len(pile))
        if g.round == mark[0]:
            return new, False, [c._text for c in pile[mark[1] :]]
        return new, True, [c._text for c in pile]

    def forced_draw(self) -> Card | None:
        """The stock's top card when this seat's move must begin with a draw, else None.

        That card lands in the mover's hand in this move whatever it does (the fallback
        draws it too), so showing it early shows the seat nothing it would not see.
        """
        game = self.game
        move = game.move
        if game.mover != self.seat or move.put or not game.stock or move.puttable():
            return None
        return game.stock[-1]

    def say(self, text: str, output: bool = False) -> None:
        """A ``say`` line (or printed output) of this seat, capped in the engine."""
        self.game.say(self.seat, text, output=output)

    def checked_put(self, card: Card, suit: str | None) -> None:
        """Put through the engine's checked path (:class:`IllegalMove` and no change if not allowed)."""
        self._mine().put(card, suit)

    def checked_draw(self) -> Card:
        """Draw through the engine's checked path."""
        return self._mine().draw()

    def checked_finish(self) -> None:
        """Finish through the engine's checked path."""
        self._mine().finish()

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.game.over


#: Record bytes of a fault's detail at most (3 faults retire a bot, so a seat adds at most
#: about 1 KiB of fault lines to a game's record, whatever its exceptions' messages hold).
DETAIL_BYTES = 200


def clip_detail(detail: str, limit: int = DETAIL_BYTES) -> str:
    """``detail`` cut so that its JSON text in a record takes at most ``limit`` bytes."""
    if len(detail) * 12 + 2 <= limit:  # no character takes more than 12 (a surrogate pair escaped)
        return detail
    encode = json.dumps
    lo, hi = 0, min(len(detail), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(encode(detail[:mid])) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return detail[:lo]


def _detail(exc: BaseException, limit: int = 300) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = ""
    for frame in reversed(tb):
        if not frame.filename.startswith(_ARENA_DIR):
            where = f" (line {frame.lineno})"
            break
    return f"{type(exc).__name__}: {exc}{where}"[:limit]


import os as _os  # noqa: E402

_ARENA_DIR = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))


class Referee:
    """Runs games. One referee may run many games; it holds only settings."""

    def __init__(
        self,
        rules: Rules = CONTEST,
        *,
        max_faults: int = 3,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        move_times: bool = True,
    ) -> None:
        self.rules = rules
        self.max_faults = max_faults
        self.on_event = on_event
        #: Time each move (:attr:`GameOutcome.move_times`); False for a caller that never reads
        #: them (``arena play``), which spares two clock reads a move.
        self.move_times = move_times

    def play(
        self, players: Sequence[Seat], *, seed: Any = 0, game_id: str = "1", bots: Sequence[str] | None = None
    ) -> GameOutcome:
        """Play one full game; ``players[s]`` sits at seat ``s``. Always completes."""
        # Each seat by its protocol: in-process players get a Turn a move, remote seats their context.
        remote: list[RemoteSeat | None] = [p if is_remote(p) else None for p in players]  # type: ignore[misc]  # is_remote checked it
        local: list[Player | None] = [None if r is not None else p for p, r in zip(players, remote, strict=True)]  # type: ignore[misc]  # the others
        started = time.perf_counter()
        n = len(players)
        names = tuple(p.name for p in players)
        game = Game(n, self.rules, seed, on_event=self.on_event)
        header: GameEvent = {
            "event": "game",
            "version": 1,
            "game": game_id,
            "seed": seed,
            "players": [{"seat": s, "name": names[s], "bot": (bots[s] if bots else names[s])} for s in range(n)],
            "rules": self.rules.to_dict(),
        }
        game.record(header)
        faults: list[Fault] = []
        move_times: list[list[float]] = [[] for _ in range(n)]
        counts = [0] * n
        retired: set[int] = set()
        # The fallback's rng is made on first use: seeding one costs a few
        # microseconds and most games never need it. Same seed either way.
        fallback_rng: list[random.Random] = []

        def fallback() -> None:
            if not fallback_rng:
                fallback_rng.append(random.Random(derive_seed(seed, "fallback")))
            fallback_move(game, fallback_rng[0])

        shared = PublicFeed()
        tables = [EngineTable(game, s, names, shared) for s in range(n)]

        def fault(seat: int, kind: FaultKind, detail: str, retire: bool = False) -> None:
            detail = clip_detail(detail)
            faults.append(Fault(seat, kind, detail, game.round))
            # Records hold the kind's plain value (records are JSON, a seat's history is marshalled).
            event: FaultEvent = {"event": "fault", "seat": seat, "kind": kind.value, "detail": detail}
            game.record(event)
            if kind is FaultKind.RETIRED:
                return
            counts[seat] += 1
            if seat not in retired and (kind is FaultKind.CRASH or retire or counts[seat] >= self.max_faults):
                retired.add(seat)
                why = "crashed" if kind is FaultKind.CRASH else "stopped" if retire else f"{counts[seat]} faults"
                faults.append(Fault(seat, FaultKind.RETIRED, why, game.round))
                event = {"event": "fault", "seat": seat, "kind": FaultKind.RETIRED.value, "detail": why}
                game.record(event)

        def notify(seat: int, method: str, arg: Any) -> None:
            if seat in retired:
                return
            try:
                getattr(players[seat], method)(arg)
            except BotFault as bad:
                fault(seat, bad.kind, f"{method}: {bad.detail}", bad.retire)
            except Exception as exc:  # noqa: BLE001 - any bot error is a fault
                fault(seat, FaultKind.EXCEPTION, f"{method}: {_detail(exc)}")

        for s in range(n):
            elsewhere = remote[s]
            if elsewhere is not None:
                elsewhere.sit(tables[s])
            notify(s, "start_game", GameInfo(s, names, self.rules, game_id))
        game.start_round()
        moves = 0
        clock = time.perf_counter  # hot loop: local names
        timed = self.move_times
        t0 = 0.0
        while True:
            seat = game.mover
            move = game.move
            if seat in retired:
                fallback()
            else:
                if timed:
                    t0 = clock()
                try:
                    here = local[seat]
                    if here is not None:
                        here.move(Turn(move, tables[seat]))
                    else:
                        remote[seat].play_move()  # type: ignore[union-attr]  # a seat is one or the other
                except BotFault as bad:
                    fault(seat, bad.kind, bad.detail, bad.retire)
                except Exception as exc:  # noqa: BLE001 - any bot error is a fault
                    fault(seat, FaultKind.EXCEPTION, _detail(exc))
                else:
                    if not move.finished:
                        if move.can_finish():
                            game.finish()
                        else:
                            refusal = move.finish_refusal()
                            fault(
                                seat,
                                FaultKind.ILLEGAL_FINISH,
                                f"{refusal[0]}: {refusal[1]}" if refusal else "move not finished",
                            )
                if timed:
                    move_times[seat].append(clock() - t0)
                if not move.finished:
                    fallback()
            moves += 1
            if not game.in_round:
                round_result = game.round_results[-1]
                for s in range(n):
                    notify(s, "end_round", round_result)
                if game.over:
                    break
                game.start_round()
        result = game.end(frozenset(retired))
        for s in range(n):
            notify(s, "end_game", result)
        return GameOutcome(
            game_id,
            seed,
            names,
            result,
            faults,
            frozenset(retired),
            move_times,
            moves,
            time.perf_counter() - started,
            game.log,
        )
