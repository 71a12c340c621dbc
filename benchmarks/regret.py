"""Decision regret of search bots against an oracle: a paired, low-variance test of a change.

A game's outcome spreads so widely that telling two versions of ``search`` apart by
places takes thousands of games. This measures decisions instead. Heuristic bots
play whole games; at each move start of seat 0 with two or more candidate moves (the
candidates of ``bots/search.py``), every candidate is valued by an **oracle** that
sees the real hidden hands (``--oracle`` playouts of each candidate over the real
position, the stock's order shuffled for each, the same worlds for every candidate,
valued as ``search`` values them). Each variant then chooses from what its seat
knows, and its regret is the oracle's best value minus the oracle's value of its
choice. Every variant meets the same positions, so their difference has a small
interval: a change worth keeping lowers the regret.

The oracle knows the hidden cards, so no bot reaches zero; what counts is the
difference. For scale, the ``heuristic`` bot's own choices are scored too.

    python benchmarks/regret.py [--players 2] [--games 8] [--oracle 200] [--seed 1]
        [VARIANT ...]      NAME=FILE[:PLAYOUTS], e.g. mine=my_search.py:400
                           (default: search at 160 and at 400 playouts)

A variant file is a bot like ``bots/search.py``: ``Bot(playouts=N)`` with
``candidates(turn, drawn)`` and ``choose(turn, random, candidates)``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from arena.botapi.forward import World, _copy_game
from arena.game.engine import derive_seed
from arena.game.referee import Referee
from arena.seats.loader import load_trusted, resolve_bot

SEARCH = str(Path(__file__).resolve().parent.parent / "bots" / "search.py")


def bot_class(spec: str) -> type:
    """The ``Bot`` class of a bot file or registered name, loaded as trusted code."""
    return type(load_trusted(resolve_bot(spec))(0, 0).bot)


class Variant:
    def __init__(self, name: str, cls: type | None, playouts: int) -> None:
        self.name, self.cls, self.playouts = name, cls, playouts
        self.regret: list[float] = []
        self.cpu = 0.0


def parse_variant(text: str) -> Variant:
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise ValueError(f"a variant is NAME=FILE[:PLAYOUTS], not {text!r}")
    path, _, count = rest.rpartition(":") if rest.rpartition(":")[2].isdigit() else (rest, "", "")
    return Variant(name, bot_class(path), int(count) if count else 400)


def heuristic_choice(heuristic: Any, turn: Any, candidates: list[Any]) -> Any:
    """The candidate the heuristic bot would play (its plan, its final jack's suit)."""
    hand = list(turn.hand)
    plan = heuristic.best_plan(turn, hand, turn.puttable())
    if plan is None and "draw" in candidates:
        return "draw"
    same = [c for c in candidates if c != "draw" and plan and [card for card, _ in c] == plan]
    for c in same:
        if plan[-1].rank != "j" or c[-1][1] == heuristic.order_from(hand, plan):
            return c
    return same[0] if same else candidates[0]


class Probe:
    """Seat 0: plays as the heuristic, and scores every variant at each of its decisions."""

    def __init__(self, inner: Any, judge: Any, heuristic: Any, variants: list[Variant], oracle: int, seed: int) -> None:
        self.inner, self.name = inner, inner.name
        self.judge, self.heuristic, self.variants, self.oracle, self.seed = judge, heuristic, variants, oracle, seed
        self.positions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def move(self, turn: Any) -> None:
        candidates = self.judge.candidates(turn, drawn=False)
        if len(candidates) > 1:
            self.score(turn, candidates)
        self.inner.move(turn)

    def score(self, turn: Any, candidates: list[Any]) -> None:
        self.positions += 1
        rng = random.Random(derive_seed(self.seed, "oracle", self.positions))
        judge = self.judge
        judge.playouts, judge.stop = 1, 10**12
        judge.choose(turn, rng, candidates[:2])  # sets the value's table for this position
        game = turn._table.game  # the real game: the oracle alone reads it
        names = tuple(str(p.name) for p in turn.players)
        totals = [0.0] * len(candidates)
        for _ in range(self.oracle):
            real = _copy_game(game)
            real.rng.seed(rng.getrandbits(64))
            real.rng.shuffle(real.stock)  # its own log, from _copy_game: the real game's stays as it was
            world = World(real, turn.seat, names)
            for i, plan in enumerate(candidates):
                totals[i] += judge.playout(world.clone(), plan, turn.seat, turn.rules.limit)
        value = [t / self.oracle for t in totals]
        best = max(value)
        for v in self.variants:
            if v.cls is None:
                chosen = heuristic_choice(self.heuristic, turn, candidates)
            else:
                bot = v.cls(playouts=v.playouts)
                bot.stop = 10**12
                start = time.process_time()
                chosen = bot.choose(turn, random.Random(derive_seed(self.seed, "variant", self.positions)), candidates)
                v.cpu += time.process_time() - start
            v.regret.append(best - value[candidates.index(chosen)])


def report(n: int, games: int, variants: list[Variant]) -> None:
    positions = min(len(v.regret) for v in variants)  # a run stopped mid-decision: the decisions all scored
    for v in variants:
        del v.regret[positions:]
    base = variants[0]
    print(f"{n} players, {games} games, {positions} decisions (regret: the oracle's best minus the choice's value)")
    for v in variants:
        diffs = [a - b for a, b in zip(v.regret, base.regret, strict=True)]
        half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 and v is not base else 0.0
        cpu = f"CPU {v.cpu / positions * 1000:6.1f} ms a decision" if v.cls is not None else "(its own rules)"
        print(
            f"  {v.name:>12}: regret {statistics.mean(v.regret):.4f}, against {base.name} "
            f"{statistics.mean(diffs):+.4f} ± {half:.4f} (95%); {cpu}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", metavar="NAME=FILE[:PLAYOUTS]")
    parser.add_argument("--players", type=int, default=2, choices=range(2, 7))
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--oracle", type=int, default=200, help="playouts of each candidate in the real position")
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args(argv)
    if opts.games < 1 or opts.oracle < 1:
        parser.error("--games and --oracle must be 1 or more")
    try:
        specs = opts.variants or [f"search160={SEARCH}:160", f"search400={SEARCH}:400"]
        variants = [parse_variant(s) for s in specs] + [Variant("heuristic", None, 0)]
        judge_cls = bot_class(SEARCH)
        heuristic_cls = bot_class("heuristic")
    except Exception as exc:  # noqa: BLE001 - a bad variant is one line
        print(f"regret: {exc}", file=sys.stderr)
        return 2
    factory = load_trusted(resolve_bot("heuristic"))
    referee = Referee()
    played = 0
    try:
        for g in range(opts.games):
            key = derive_seed(opts.seed, "bots", "regret", g)
            players: list[Any] = [factory(key, s) for s in range(opts.players)]
            probe = Probe(players[0], judge_cls(), heuristic_cls(), variants, opts.oracle, derive_seed(opts.seed, g))
            players[0] = probe
            referee.play(players, seed=derive_seed(opts.seed, "deal", "regret", g))
            played += 1
    except KeyboardInterrupt:
        print("stopped: the decisions scored so far", file=sys.stderr)
    if min(len(v.regret) for v in variants) > 1:
        report(opts.players, played, variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
