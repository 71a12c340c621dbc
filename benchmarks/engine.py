"""Engine speed: full games and moves per second with ``random`` bots, against peers.

Runs our referee in one process for 2 to 6 players and, when installed
(``pip install -e '.[bench]'``), OpenSpiel's ``crazy_eights`` (5 players,
random legal actions driven from Python) and RLCard's ``uno`` with random
agents, all in the same run, and prints our rate over theirs. Measurements
are interleaved in short slices so that load on the machine hits every
contender alike.

    python benchmarks/engine.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from tabulate import tabulate

from arena.loader import load_trusted, resolve_bot
from arena.referee import Referee


def ours(n: int) -> Callable[[int], tuple[int, int, int]]:
    """One game with ``n`` random bots; returns (games, rounds, moves)."""
    factory = load_trusted(resolve_bot("random"))
    referee = Referee()

    def run(i: int) -> tuple[int, int, int]:
        outcome = referee.play([factory(i, s) for s in range(n)], seed=i)
        return 1, outcome.result.rounds, outcome.moves

    return run


def openspiel() -> Callable[[int], tuple[int, int, int]] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("crazy_eights", {"players": 5})
    rng = random.Random(0)

    def run(i: int) -> tuple[int, int, int]:
        state = game.new_initial_state()
        moves = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                actions = state.legal_actions()
                state.apply_action(actions[rng.randrange(len(actions))])
                moves += 1
        return 1, 1, moves  # one crazy-eights game is one deal

    return run


def rlcard_uno() -> Callable[[int], tuple[int, int, int]] | None:
    try:
        import rlcard
        from rlcard.agents import RandomAgent
    except ImportError:
        return None
    env = rlcard.make("uno", config={"seed": 0})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])

    def run(i: int) -> tuple[int, int, int]:
        trajectories, _ = env.run(is_training=False)
        return 1, 1, sum(len(t) // 2 for t in trajectories)

    return run


def measure(
    contenders: dict[str, Callable[[int], tuple[int, int, int]]], seconds: float, slice_s: float = 0.25
) -> dict[str, tuple[float, float, float]]:
    """Round-robin time slices over the contenders; rates per second."""
    totals = {name: [0, 0, 0, 0.0, 0] for name in contenders}
    end = time.perf_counter() + seconds * len(contenders)
    while time.perf_counter() < end:
        for name, run in contenders.items():
            t = totals[name]
            stop = time.perf_counter() + slice_s
            start = time.perf_counter()
            while time.perf_counter() < stop:
                g, r, m = run(t[4])
                t[0] += g
                t[1] += r
                t[2] += m
                t[4] += 1
            t[3] += time.perf_counter() - start
    return {name: (t[0] / t[3], t[1] / t[3], t[2] / t[3]) for name, t in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per contender (default 3)")
    args = parser.parse_args()

    contenders: dict[str, Callable[[int], tuple[int, int, int]]] = {f"arena {n}p": ours(n) for n in range(2, 7)}
    peers = {"openspiel crazy_eights 5p": openspiel(), "rlcard uno": rlcard_uno()}
    for name, run in peers.items():
        if run is None:
            print(f"({name}: not installed; pip install -e '.[bench]')")
        else:
            contenders[name] = run
    rates = measure(contenders, args.seconds)
    rows = [[name, f"{g:,.0f}", f"{r:,.0f}", f"{m:,.0f}"] for name, (g, r, m) in rates.items()]
    print(
        tabulate(
            rows, headers=["contender", "games/s", "rounds/s", "moves/s"], colalign=("left", "right", "right", "right")
        )
    )
    ours5 = rates["arena 5p"][1]
    if "openspiel crazy_eights 5p" in rates:
        theirs = rates["openspiel crazy_eights 5p"][0]
        print(f"arena 5p rounds/s / openspiel crazy_eights 5p games/s = {ours5 / theirs:.2f} (target >= 0.8)")
    if "rlcard uno" in rates:
        theirs = rates["rlcard uno"][0]
        print(f"arena 5p rounds/s / rlcard uno games/s = {ours5 / theirs:.2f} (target >= 5)")


if __name__ == "__main__":
    main()
