"""Engine speed: full games and moves per second with ``random`` bots, against peers.

Runs our referee in one process for 2 to 6 players and, when installed
(``pip install -e '.[bench]'``), OpenSpiel's ``crazy_eights`` (5 players,
random legal actions driven from Python) and RLCard's ``uno`` with random
agents, all in the same run, and prints our rate over theirs. Measurements
are interleaved in short slices so that load on the machine hits every
contender alike, and counted in CPU time (``time.process_time``: the one
process runs every contender), so that time the machine gives to other
processes counts for nobody.

What is timed is the game: ``Referee().play`` on our side, a game from
``new_initial_state()`` (or ``env.run``) to its end on theirs. Seating a
game's fresh, seeded bots (the loader runs each bot's module and makes its
``random``) is done before its clock starts, as the peers make their agents
outside theirs; the row ``arena 5p, bots loaded per game`` times that too.

``--end-to-end`` times ``arena play random random random random random
--games N`` as a user runs it (a fresh interpreter, imports, the match loop,
results and the table; CPU of the child process, by ``wait4``), in rounds
interleaved with slices of OpenSpiel of the same CPU time, and prints the
ratio of our rounds/s (the rounds of those seeds, counted untimed) to its
games/s, round by round.

    python benchmarks/engine.py [--seconds 3]
    python benchmarks/engine.py --end-to-end [--games 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from tabulate import tabulate

from arena.game.referee import Referee
from arena.seats.loader import load_trusted, resolve_bot

#: One game, ready to play: returns (games, rounds, moves). Only this call is timed.
Game = Callable[[], tuple[int, int, int]]
#: A contender: the set-up of game ``i`` (untimed), which returns that game.
Contender = Callable[[int], Game]


def ours(n: int, *, load_in_game: bool = False) -> Contender:
    """Games of ``n`` random bots, fresh and seeded per game; with ``load_in_game`` their
    loading is timed with the game."""
    factory = load_trusted(resolve_bot("random"))
    referee = Referee()

    def setup(i: int) -> Game:
        players = [] if load_in_game else [factory(i, s) for s in range(n)]

        def run() -> tuple[int, int, int]:
            seated = [factory(i, s) for s in range(n)] if load_in_game else players
            outcome = referee.play(seated, seed=i)
            return 1, outcome.result.rounds, outcome.moves

        return run

    return setup


def openspiel() -> Contender | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("crazy_eights", {"players": 5})
    rng = random.Random(0)

    def run() -> tuple[int, int, int]:
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

    return lambda i: run  # nothing to set up per game: one generator drives every game


def rlcard_uno() -> Contender | None:
    try:
        import rlcard
        from rlcard.agents import RandomAgent
    except ImportError:
        return None
    env = rlcard.make("uno", config={"seed": 0})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])

    def run() -> tuple[int, int, int]:
        trajectories, _ = env.run(is_training=False)
        return 1, 1, sum(len(t) // 2 for t in trajectories)

    return lambda i: run  # the agents are made once, with the environment


#: One cycle of one contender: (games, rounds, moves, CPU seconds).
Cycle = tuple[int, int, int, float]


def measure(
    contenders: dict[str, Contender], seconds: float, slice_s: float = 0.1, batch: int = 8
) -> dict[str, list[Cycle]]:
    """Round-robin slices of CPU time over the contenders: per contender, one :data:`Cycle` per round.

    Games are set up ``batch`` at a time and then played back to back under one
    reading of the clock, so that reading it costs every contender alike.
    """
    clock = time.process_time
    cycles: dict[str, list[Cycle]] = {name: [] for name in contenders}
    played = dict.fromkeys(contenders, 0)
    end = clock() + seconds * len(contenders)
    while clock() < end:
        for name, setup in contenders.items():
            games = rounds = moves = 0
            spent = 0.0
            while spent < slice_s:
                ready = [setup(played[name] + k) for k in range(batch)]
                start = clock()
                for play in ready:
                    g, r, m = play()
                    games, rounds, moves = games + g, rounds + r, moves + m
                spent += clock() - start
                played[name] += batch
            cycles[name].append((games, rounds, moves, spent))
    return cycles


def rates(cycles: list[Cycle]) -> tuple[float, float, float]:
    """Games, rounds and moves per CPU second over all cycles."""
    seconds = sum(c[3] for c in cycles)
    games, rounds, moves = (sum(c[i] for c in cycles) / seconds for i in range(3))
    return games, rounds, moves


def paired_ratio(ours: list[Cycle], theirs: list[Cycle], field: tuple[int, int] = (1, 0)) -> str:
    """Our rate over theirs (rounds over games by default), cycle by cycle: the median and
    quartiles of the ratios of slices run side by side, so a burst of load on the machine
    moves one cycle's ratio, not the whole estimate."""
    ratios = sorted((o[field[0]] / o[3]) / (t[field[1]] / t[3]) for o, t in zip(ours, theirs, strict=True))
    if len(ratios) < 4:
        return f"{statistics.median(ratios):.2f} (median of {len(ratios)} cycles)"
    q1, median, q3 = statistics.quantiles(ratios, n=4)
    return f"{median:.2f} (median of {len(ratios)} cycles, quartiles {q1:.2f}-{q3:.2f})"


def rounds_of(games: int, seed: int) -> int:
    """The rounds of ``arena play random x5 --games games --seed seed`` (played here, untimed)."""
    import arena

    result = arena.play(["random"] * 5, games=games, seed=seed)
    return sum(1 for record in result.records for e in record if e["event"] == "round")


def play_cli(games: int, seed: int) -> float:
    """CPU seconds (user + system) of one ``arena play`` of five random bots, run as a user runs it."""
    argv = [sys.executable, "-m", "arena", "play", *["random"] * 5, "--games", str(games), "--seed", str(seed)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"arena play failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return usage.ru_utime + usage.ru_stime


def end_to_end(games: int, repeats: int) -> None:
    """Rounds of ``arena play`` (one subprocess) against OpenSpiel and the engine alone (this
    process: ``Referee().play``, bots seated untimed) for the same CPU time, round by round."""
    theirs = openspiel()
    if theirs is None:
        raise SystemExit("openspiel is not installed; pip install -e '.[bench]'")
    contenders = {"openspiel": theirs, "engine": ours(5)}
    ratios: dict[str, list[float]] = {"end to end": [], "engine alone": []}
    clock = time.process_time
    for r in range(repeats):
        seed = 1000 + r
        ours_cpu = play_cli(games, seed)
        rounds = rounds_of(games, seed)
        rate: dict[str, float] = {}
        for name, setup in contenders.items():
            spent, units, i = 0.0, 0, 0
            while spent < ours_cpu:
                ready = [setup(i + k) for k in range(8)]
                start = clock()
                for play in ready:
                    units += play()[1]  # rounds (a crazy-eights game is one)
                spent += clock() - start
                i += 8
            rate[name] = units / spent
        ratios["end to end"].append(rounds / ours_cpu / rate["openspiel"])
        ratios["engine alone"].append(rate["engine"] / rate["openspiel"])
        print(
            f"round {r + 1}: arena play {games} games, {rounds} rounds in {ours_cpu:.2f} s CPU "
            f"({rounds / ours_cpu:,.0f} rounds/s); engine alone {rate['engine']:,.0f} rounds/s; "
            f"openspiel {rate['openspiel']:,.0f} games/s; ratios {ratios['end to end'][-1]:.2f} "
            f"and {ratios['engine alone'][-1]:.2f}",
            flush=True,
        )
    for name, values in ratios.items():
        print(
            f"{name}: arena rounds/s / openspiel crazy_eights 5p games/s = {statistics.median(values):.2f} "
            f"(median of {len(values)}, {min(values):.2f}-{max(values):.2f}); target >= 0.8"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per contender (default 3)")
    parser.add_argument("--end-to-end", action="store_true", help="time `arena play` of five random bots")
    parser.add_argument("--games", type=int, default=2000, help="with --end-to-end: games per run (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="with --end-to-end: runs (default 5)")
    args = parser.parse_args()
    if args.end_to_end:
        end_to_end(args.games, args.repeats)
        return

    contenders: dict[str, Contender] = {f"arena {n}p": ours(n) for n in range(2, 7)}
    contenders["arena 5p, bots loaded per game"] = ours(5, load_in_game=True)
    peers = {"openspiel crazy_eights 5p": openspiel(), "rlcard uno": rlcard_uno()}
    for name, run in peers.items():
        if run is None:
            print(f"({name}: not installed; pip install -e '.[bench]')")
        else:
            contenders[name] = run
    cycles = measure(contenders, args.seconds)
    rows = [[name, *(f"{x:,.0f}" for x in rates(c))] for name, c in cycles.items()]
    print(
        tabulate(
            rows, headers=["contender", "games/s", "rounds/s", "moves/s"], colalign=("left", "right", "right", "right")
        )
    )
    ours5 = cycles["arena 5p"]
    if "openspiel crazy_eights 5p" in cycles:
        theirs = cycles["openspiel crazy_eights 5p"]
        print(f"arena 5p rounds/s / openspiel crazy_eights 5p games/s = {paired_ratio(ours5, theirs)}; target >= 0.8")
        loaded = paired_ratio(cycles["arena 5p, bots loaded per game"], theirs)
        print(f"  the same with the bots' loading timed = {loaded}")
    if "rlcard uno" in cycles:
        print(f"arena 5p rounds/s / rlcard uno games/s = {paired_ratio(ours5, cycles['rlcard uno'])}; target >= 5")


if __name__ == "__main__":
    main()
