"""Shared fixtures: scripted deals for rule tests, and engine state snapshots.

``scripted_game(hands, stock, opening, ...)`` builds a :class:`~arena.game.engine.Game`
whose current round was dealt as written instead of shuffled::

    game = scripted_game(["9h 7s", "kd"], stock="qs 10c", opening="9c")
    # seat 0 is to move; the opening 9c counts as put by seat 0 (R3.3);
    # qs is the stock's top card.

``snapshot(game)`` captures everything an action could change, so that a
test can assert that a refused action changed nothing.
"""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.game.cards import Card, cards
from arena.game.engine import Game
from arena.game.moves import Move
from arena.game.rules import CONTEST, Rules

#: The folders of the fast subset (``pytest -m fast``): the game, the bot API and records, the
#: contest's law, checked in seconds while working on it. Marked by folder, never by hand.
FAST_FOLDERS = ("game", "botapi", "records")
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The fast subset marked by folder (:data:`FAST_FOLDERS`, less tests marked ``slow``); then
    the order. Modules holding a test marked ``long`` first, and in them the ``long`` tests first: longest
    first is what keeps a parallel run (``pytest -n 2``) from ending with one worker idle while
    the other still runs a ten-second test it picked up last. A module stays in one piece, so its
    module-scoped fixtures (a browser, a reference tournament) are still made once."""
    for item in items:
        folder = Path(str(item.fspath)).resolve().relative_to(_TESTS).parts[0]
        if folder in FAST_FOLDERS and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.fast)
    index = {id(item): i for i, item in enumerate(items)}
    first: dict[object, int] = {}  # each module's place in the collection
    for i, item in enumerate(items):
        first.setdefault(item.module, i)
    long_modules = {item.module for item in items if item.get_closest_marker("long")}

    def key(item: pytest.Item) -> tuple[bool, int, bool, int]:
        long = item.get_closest_marker("long") is not None
        return item.module not in long_modules, first[item.module], not long, index[id(item)]

    items.sort(key=key)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium under Playwright, one per test module (:mod:`support.browser`)."""
    from support.browser import chromium

    with chromium() as b:
        yield b


@pytest.fixture(scope="session")
def greedy() -> Any:
    """The reference bot ``greedy`` as a trusted factory: the sandbox tests' honest opponent."""
    from arena.seats.loader import load_trusted, resolve_bot

    return load_trusted(resolve_bot("greedy"))


#: The SIGINT and SIGTERM handlers the test session started with.
_SESSION_HANDLERS = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """After each test, SIGINT and SIGTERM are handled as when the session started: code under
    test that runs a worker's loop in the test's process (``worker_main``), or a Ray started
    in-process, installs handlers of its own, and a later test that sends itself a signal must
    not meet them (it did, depending on the order the tests ran in)."""
    yield
    for s, handler in _SESSION_HANDLERS.items():
        if signal.getsignal(s) is not handler:
            signal.signal(s, handler)


def _parse(spec: str | Sequence[Card | str]) -> list[Card]:
    if isinstance(spec, str):
        return cards(spec)
    return [Card(c) for c in spec]


def make_scripted_game(
    hands: Sequence[str | Sequence[str]],
    stock: str | Sequence[str] = (),
    opening: str = "9h",
    n: int | None = None,
    rules: Rules = CONTEST,
    *,
    first: int = 0,
    scores: Sequence[int] | None = None,
    pile_below: str | Sequence[str] = (),
    suit: str | None = None,
    first_move: bool = True,
    seed: Any = 0,
) -> Game:
    """A game whose round 1 (or the round after ``scores``) is dealt as written.

    ``hands`` per seat; ``stock`` top first; ``opening`` is the pile's top.
    ``pile_below`` are older pile cards under it (oldest first), for R7 tests.
    With ``first_move`` (default) the opening counts as put by ``first`` in
    its move (R3.3); otherwise ``first`` starts a fresh move on that top, as
    if another player had put it, and ``suit`` is the suit to follow.
    Not every card of the deck needs to be somewhere; no card may be twice.
    """
    n = n or len(hands)
    game = Game(n, rules, seed)
    if scores is not None:
        game.scores = list(scores)
    game.start_round()
    hand_lists = [_parse(h) for h in hands] + [[] for _ in range(n - len(hands))]
    stock_top_first = _parse(stock)
    top = Card(opening)
    below = _parse(pile_below)
    used = [c for h in hand_lists for c in h] + stock_top_first + below + [top]
    dup = [c for c, k in Counter(used).items() if k > 1]
    assert not dup, f"scripted deal uses cards twice: {dup}"
    game.hands = hand_lists
    game.stock = list(reversed(stock_top_first))  # the engine pops the top from the end
    game.pile = below + [top]
    game.round_pile = list(game.pile)
    game.mover = first
    follow = suit or top.suit
    game.move = Move(
        first,
        game.hands[first],
        top,
        follow,
        put=[top] if first_move else [],
        stock=len(game.stock),
        pile_size=len(game.pile),
        first=first_move,
    )
    # Keep the log consistent with the scripted deal.
    while game.log and game.log[-1]["event"] in ("put", "deal"):
        game.log.pop()
    game.log.append(
        {
            "event": "deal",
            "round": game.round,
            "first": first,
            "hands": [[str(c) for c in h] for h in hand_lists],
            "stock": [str(top)] + [str(c) for c in stock_top_first],
            "scores": list(game.scores),
        }
    )
    opener = first if first_move else (first - 1) % n
    event: dict[str, Any] = {"event": "put", "seat": opener, "card": str(top), "opening": True}
    if top.rank == "j":
        event["suit"] = follow
    game.log.append(event)
    return game


def take_snapshot(game: Game) -> dict[str, Any]:
    """Everything an action may change, copied."""
    move = game.move
    return {
        "hands": [list(h) for h in game.hands],
        "stock": list(game.stock),
        "pile": list(game.pile),
        "round_pile": list(game.round_pile),
        "scores": list(game.scores),
        "skips": list(game.skips),
        "drawn": list(game.drawn),
        "mover": game.mover,
        "moves": game.moves,
        "round": game.round,
        "in_round": game.in_round,
        "over": game.over,
        "log": len(game.log),
        "move": (
            move.seat,
            list(move.hand),
            move.top,
            move.suit,
            list(move.put),
            move.drew,
            move.stock,
            move.pile_size,
            move.finished,
            move.first,
        ),
        "move_is": id(move),
    }


@pytest.fixture
def scripted_game() -> Callable[..., Game]:
    """The :func:`make_scripted_game` builder."""
    return make_scripted_game


@pytest.fixture
def snapshot() -> Callable[[Game], dict[str, Any]]:
    """The :func:`take_snapshot` function."""
    return take_snapshot


def assert_refused(game: Game, rule: str, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Exception:
    """Run ``action``; assert it raises ``IllegalMove`` citing ``rule`` and changes nothing."""
    from arena.errors import IllegalMove

    before = take_snapshot(game)
    with pytest.raises(IllegalMove) as info:
        action(*args, **kwargs)
    assert info.value.rule == rule, f"expected {rule}, got {info.value}"
    assert str(info.value).startswith(rule + ":")
    assert take_snapshot(game) == before, "a refused action changed the game"
    return info.value


@pytest.fixture
def refused() -> Callable[..., Exception]:
    """The :func:`assert_refused` check."""
    return assert_refused


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """One local Ray instance per test process, shared by the tests that run on Ray: each start of
    Ray costs seconds, and ``ray_backend.start`` joins the instance this process is in already."""
    ray = pytest.importorskip("ray")
    from arena.tournament.backends import ray_tasks as ray_backend

    started = ray_backend.start(2, None)
    yield
    if started:
        ray.shutdown()
