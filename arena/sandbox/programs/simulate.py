"""Searching ahead over the wire (docs/protocol.md, "Searching ahead"): the referee's answers
to a program's ``sample`` and ``simulate`` requests, with the forward model of :mod:`arena.botapi.forward`.

The ``turn`` a sample is drawn for is built here from the seat's
:class:`~arena.game.referee.SeatContext` only, through :class:`_ViewTable`: the seat's own
move, the public counts, pile and history (R10), the very view the program is sent.
So an answer is a function of that view and the request's seed alone, whatever the
hidden deal (tests/sandbox/programs/test_progsim.py plays two deals with one public history).

The referee's CPU spent on a request is measured here (``time.thread_time``) and
charged to the program by :class:`~arena.sandbox.programs.seat.ProgramSeat`, as if the
program had spent it; a request stops between playouts once the time left to the
move is used up (:class:`~arena.sandbox.failures.WorkerTimeout`).
"""

from __future__ import annotations

import random
from time import thread_time
from typing import TYPE_CHECKING, Any

from ...botapi.forward import World, sampler
from ...botapi.turn import PlayerInfo, Turn
from ...errors import IllegalMove
from ...game.cards import Card
from ..failures import WorkerTimeout, clean

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ...game.referee import SeatContext
    from ...game.rules import Rules

#: The actions that are requests to the forward model.
REQUESTS = frozenset({"sample", "simulate"})


class _ViewTable:
    """The :class:`~arena.botapi.turn.Table` of a seat's wire view: what the program is sent, nothing
    more (its hand and move, the counts, this round's pile, the public history). It cannot act."""

    __slots__ = ("_ctx", "_names", "rules")

    def __init__(self, ctx: SeatContext, names: tuple[str, ...]) -> None:
        self._ctx = ctx
        self._names = names
        self.rules: Rules = ctx.rules

    def players(self) -> tuple[PlayerInfo, ...]:
        counts = self._ctx.counts()
        n = len(counts) // 3
        return tuple(PlayerInfo(s, self._names[s], counts[s], counts[n + s], counts[2 * n + s]) for s in range(n))

    def pile(self) -> tuple[Card, ...]:
        return tuple(Card(text) for text in self._ctx.pile_since((-1, 0))[2])

    def history(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(self._ctx.history_since(0))

    def _refuse(self, *args: Any) -> Any:
        raise IllegalMove("R2.1", "a view for sampling does not act")

    act_put = act_draw = act_finish = act_say = _refuse


class Searcher:
    """One program seat's forward model: its sampler (made once per state of a move) and the
    referee CPU its requests took, this turn and this game."""

    __slots__ = ("names", "_key", "_sample", "turn_seconds", "game_seconds")

    def __init__(self) -> None:
        self.names: tuple[str, ...] = ()
        self._key: tuple[Any, int] | None = None
        self._sample: Callable[..., World] | None = None
        self.turn_seconds = 0.0
        self.game_seconds = 0.0

    def sampler(self, ctx: SeatContext) -> Callable[..., World]:
        """``sample(random)`` for the seat's view now; the history is parsed once per move
        and action (a put or a draw changes the view, and adds a public event)."""
        move = ctx.current_move()
        events = len(ctx.history_since(0))
        key = self._key
        if self._sample is None or key is None or key[0] is not move or key[1] != events:
            self._sample = sampler(Turn(move, _ViewTable(ctx, self.names)))
            self._key = (move, events)
        return self._sample

    def answer(self, ctx: SeatContext, request: dict[str, Any], left: float) -> dict[str, Any]:
        """The answer to a checked request (:func:`arena.sandbox.programs.wire.parse_action`), its CPU
        added to :attr:`turn_seconds` and :attr:`game_seconds`; :class:`WorkerTimeout` once it
        took more than ``left`` seconds."""
        t0 = thread_time()
        try:
            if left <= 0:
                raise WorkerTimeout("over the per-move limit")
            sample = self.sampler(ctx)
            rng = random.Random(request["seed"])
            if request["action"] == "sample":
                return sampled(sample(rng))
            return {"type": "simulated", "results": simulate(sample, rng, request, t0 + left)}
        finally:
            spent = thread_time() - t0
            self.turn_seconds += spent
            self.game_seconds += spent


def sampled(world: World) -> dict[str, Any]:
    """A ``sampled`` answer: each seat's hand and the stock (next to draw first), as card texts."""
    hands = [[c._text for c in world.hand(s)] for s in range(world.players)]
    return {"type": "sampled", "hands": hands, "stock": [c._text for c in world.stock_cards()]}


def simulate(
    sample: Callable[..., World], rng: random.Random, request: dict[str, Any], deadline: float
) -> list[list[dict[str, Any]]]:
    """Per plan, per world: the plan played in a clone of the world, then the playout's result.

    World ``i`` is the ``i``-th sample from ``rng``, the same for every plan. Past ``deadline``
    (the thread's CPU clock) between two playouts: :class:`WorkerTimeout`.
    """
    plans: list[list[list[Any]]] = request["plans"]
    policy: str = request["policy"]
    until: str = request["until"]
    max_moves: int = request["max_moves"]
    worlds = []
    for _ in range(request["worlds"]):
        if thread_time() > deadline:  # up to 4,096 samples: the clock is read between them too
            raise WorkerTimeout("over the per-move limit")
        worlds.append(sample(rng))
    results: list[list[dict[str, Any]]] = [[] for _ in plans]
    for world in worlds:
        for p, plan in enumerate(plans):
            if thread_time() > deadline:
                raise WorkerTimeout("over the per-move limit")
            results[p].append(_play(world.clone(), plan, policy, until, max_moves))
    return results


def _play(world: World, plan: list[list[Any]], policy: str, until: str, max_moves: int) -> dict[str, Any]:
    try:
        for act in plan:
            if act[0] == "put":
                world.put(act[1], act[2] if len(act) > 2 else None)
            elif act[0] == "draw":
                world.draw()
            else:
                world.finish()
    except IllegalMove as exc:
        return {"error": clean(f"{exc.rule} {exc.reason}", 120)}
    if world.in_round and (not plan or plan[-1][0] != "finish"):
        world.play_move(policy)
    world.playout(policy, until=until, max_moves=max_moves)
    return {
        "scores": list(world.scores()),
        "points": list(world.points()),
        "over": world.over,
        "in_round": world.in_round,
        "places": list(world.places()),
    }
