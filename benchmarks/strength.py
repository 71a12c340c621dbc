"""Reference-bot strength: average place, with 95% intervals.

Without arguments, plays ``heuristic, heuristic, greedy, greedy`` and ``greedy,
greedy, random, random`` (seats rotating every game) and prints each bot's average
place, and the margin between the pair with its 95% confidence interval.

``search`` plays ``search`` against ``heuristic`` at each table size of
``--players`` on duplicate deals: every deal is played once with ``search`` in
each seat and ``heuristic`` in the others, and a deal's margin is the heuristic
seats' mean place minus search's, averaged over its rotations (the 95% interval is
over deals). Also its share of first places and its CPU time per move and per game.

    python benchmarks/strength.py [--games 2000] [--seed 1]
    python benchmarks/strength.py search [--players 2 3 4 6] [--deals 100] [--playouts N] [--seed 1]
        [--bot FILE] [--each] [--jobs N] [--first-deal D]

``--first-deal D`` plays deals D, D+1, ... (each deal's seeds come from its number), so
a run stopped for time goes on where it ended and the two runs' ``--each`` lines pool.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import math
import statistics
import sys
import time
from typing import Any

from arena.game.engine import derive_seed
from arena.game.referee import Referee
from arena.seats.loader import load_trusted, resolve_bot


def matchup(a: str, b: str, games: int, seed: int) -> None:
    fa, fb = load_trusted(resolve_bot(a)), load_trusted(resolve_bot(b))
    lineup = [(a, fa), (a, fa), (b, fb), (b, fb)]
    referee = Referee()
    diffs: list[float] = []
    places: dict[str, list[int]] = {a: [], b: []}
    for g in range(games):
        order = [(s + g) % 4 for s in range(4)]
        game_seed = derive_seed(seed, "deal", "strength", g)
        bot_key = derive_seed(seed, "bots", "strength", g)
        players = [lineup[i][1](bot_key, s) for s, i in enumerate(order)]
        result = referee.play(players, seed=game_seed).result
        per = {a: [], b: []}
        for s, i in enumerate(order):
            per[lineup[i][0]].append(result.places[s])
        places[a] += per[a]
        places[b] += per[b]
        diffs.append(statistics.mean(per[b]) - statistics.mean(per[a]))
    mean = statistics.mean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs))
    print(
        f"{a:>10} avg place {statistics.mean(places[a]):.3f}   {b:>10} avg place {statistics.mean(places[b]):.3f}"
        f"   margin ({b} - {a}) {mean:+.3f} ± {half:.3f} (95%, {games} games)"
    )


class Timed:
    """A trusted player whose moves are timed with this process's CPU clock."""

    def __init__(self, player: Any, times: list[float]) -> None:
        self.player, self.name, self.times = player, player.name, times

    def __getattr__(self, name: str) -> Any:
        return getattr(self.player, name)

    def move(self, turn: Any) -> None:
        start = time.process_time()
        self.player.move(turn)
        self.times.append(time.process_time() - start)


_BOTS: dict[str, Any] = {}


def _factory(name: str) -> Any:
    """A bot's factory, loaded once a process (``--jobs`` workers load their own)."""
    if name not in _BOTS:
        _BOTS[name] = load_trusted(resolve_bot(name))
    return _BOTS[name]


def play_deal(n: int, d: int, seed: int, playouts: int | None, bot: str) -> list[tuple[int, float, list[float]]]:
    """Deal ``d``, played once with ``bot`` in each seat: (its place, the others' mean place, its CPU per move)."""
    search, heuristic = _factory(bot), _factory("heuristic")
    referee = Referee()
    game_seed = derive_seed(seed, "deal", "search", n, d)
    bot_key = derive_seed(seed, "bots", "search", n, d)
    out = []
    for seat in range(n):
        times: list[float] = []
        players: list[Any] = [heuristic(bot_key, s) for s in range(n)]
        players[seat] = Timed(search(bot_key, seat), times)
        if playouts is not None:
            players[seat].player.bot.playouts = playouts
        result = referee.play(players, seed=game_seed).result
        theirs = statistics.mean(result.places[s] for s in range(n) if s != seat)
        out.append((result.places[seat], theirs, times))
    return out


def search_strength(
    n: int,
    deals: int,
    seed: int,
    playouts: int | None,
    bot: str = "search",
    each: bool = False,
    jobs: int = 1,
    first: int = 0,
) -> None:
    """``bot`` (``search`` or a file) against ``n - 1`` heuristic bots on duplicate deals; one line of results.

    With ``jobs`` > 1 the deals are split across that many processes; every deal is
    played exactly as in a serial run (its seeds come from its number) and taken in
    deal order, so the results are the same but for the CPU times."""
    margins: list[float] = []
    places: list[int] = []
    others: list[float] = []
    times: list[float] = []
    games: list[float] = []  # search's CPU per game
    play = functools.partial(play_deal, n, seed=seed, playouts=playouts, bot=bot)
    pool = concurrent.futures.ProcessPoolExecutor(jobs) if jobs > 1 else None
    try:
        numbers = range(first, first + deals)
        outcomes = pool.map(play, numbers) if pool is not None else map(play, numbers)
        for d, deal in zip(numbers, outcomes, strict=False):
            per_deal = []
            for seat, (mine, theirs, moves) in enumerate(deal):
                times += moves
                games.append(sum(moves))
                places.append(mine)
                others.append(theirs)
                per_deal.append(theirs - mine)
                if each:  # for pairing two versions game by game
                    print(f"game {n} {d} {seat} {mine} {theirs:.3f}", file=sys.stderr, flush=True)
            margins.append(statistics.mean(per_deal))
            if (d + 1 - first) % 10 == 0 and d + 1 - first < deals:
                report(n, margins, places, others, times, games, partial=True)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    report(n, margins, places, others, times, games)


def report(
    n: int,
    margins: list[float],
    places: list[int],
    others: list[float],
    times: list[float],
    games: list[float],
    partial: bool = False,
) -> None:
    """One line of results (to stderr while the run goes on, every 10 deals)."""
    mean = statistics.mean(margins)
    half = 1.96 * statistics.stdev(margins) / math.sqrt(len(margins)) if len(margins) > 1 else float("nan")
    first = sum(1 for p in places if p == 1) / len(places)
    print(
        f"{'(so far) ' if partial else ''}{n} players: search avg place {statistics.mean(places):.3f}, "
        f"heuristic {statistics.mean(others):.3f}; margin {mean:+.3f} ± {half:.3f} (95%, "
        f"[{mean - half:+.3f}, {mean + half:+.3f}], {len(margins)} deals x {n} seats = {len(places)} games); "
        f"first in {first:.1%}; CPU per move mean {statistics.mean(times) * 1000:.1f} ms, median "
        f"{statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.0f} ms over {len(times)} moves; "
        f"CPU per game mean {statistics.mean(games):.1f} s, worst {max(games):.1f} s",
        file=sys.stderr if partial else sys.stdout,
        flush=True,
    )


def main() -> None:
    if sys.argv[1:2] == ["search"]:
        parser = argparse.ArgumentParser(description="search against heuristic on duplicate deals")
        parser.add_argument("mode")
        parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 6])
        parser.add_argument("--deals", type=int, default=100)
        parser.add_argument("--playouts", type=int, default=None, help="search's budget (default: its own)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--bot", default="search", help="the bot to measure: search, or a file (a variant of it)")
        parser.add_argument("--each", action="store_true", help="a line per game to stderr: n deal seat places")
        parser.add_argument("--jobs", type=int, default=1, help="processes to split the deals across (same results)")
        parser.add_argument(
            "--first-deal", type=int, default=0, help="the first deal's number: goes on where a stopped run ended"
        )
        opts = parser.parse_args()
        if opts.jobs < 1:
            parser.error("--jobs must be 1 or more")
        if opts.first_deal < 0 or opts.deals < 1:
            parser.error("--first-deal must be 0 or more and --deals 1 or more")
        for n in opts.players:
            search_strength(n, opts.deals, opts.seed, opts.playouts, opts.bot, opts.each, opts.jobs, opts.first_deal)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    matchup("heuristic", "greedy", args.games, args.seed)
    matchup("greedy", "random", args.games, args.seed)


if __name__ == "__main__":
    main()
