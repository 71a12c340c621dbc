"""Reference-bot strength: average place in 4-player tables, with 95% intervals.

Plays ``heuristic, heuristic, greedy, greedy`` and ``greedy, greedy, random,
random`` (seats rotating every game) and prints each bot's average place,
and the margin between the pair with its 95% confidence interval.

    python benchmarks/strength.py [--games 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import statistics

from arena.engine import derive_seed
from arena.loader import load_trusted, resolve_bot
from arena.referee import Referee


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    matchup("heuristic", "greedy", args.games, args.seed)
    matchup("greedy", "random", args.games, args.seed)


if __name__ == "__main__":
    main()
