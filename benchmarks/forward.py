"""Forward-model playouts per second, sandboxed against in-process, side by side in one run.

A bot file samples one world a move and plays ``--playouts`` clones of it to the
round's end, in two ways: with the built-in heuristic policy (``world.playout``,
the engine's own code in the bot's process) and with a loop of the bot's own code
(random legal actions through ``world.actions()``/``world.apply``, every call
crossing the code policy's guards). Each runs as a trusted bot in this process and
sandboxed, interleaved, for the same games; the time is the CPU time of the bot's
moves (in-process: this process's clock around ``move``; sandboxed: the game
process's clock, as the limits count it).

    python benchmarks/forward.py [--games 6] [--playouts 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from arena.game.referee import Referee
from arena.sandbox import Limits, SandboxFactory
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import BotSource

BOT = '''"""Plays PLAYOUTS clones of one sampled world a move, then moves like greedy."""
import random
from arena import sample_world


class Bot:
    def move(self, turn):
        world = sample_world(turn, random)
        for _ in range(PLAYOUTS):
            w = world.clone()
            if MODE == "builtin":
                w.playout("heuristic")
            else:
                steps = 0
                while w.in_round and steps < 2000:
                    w.apply(random.choice(w.actions()))
                    steps += 1
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


class Timed:
    """An in-process player whose moves are timed with this process's CPU clock."""

    def __init__(self, player: Any) -> None:
        self.player = player
        self.name = player.name
        self.cpu_times: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.player, name)

    def move(self, turn: Any) -> None:
        start = time.process_time()
        self.player.move(turn)
        self.cpu_times.append(time.process_time() - start)


def run(src: BotSource, sandboxed: bool, games: int, seed: int) -> tuple[float, int]:
    """CPU seconds of the bot's moves and its move count over ``games`` 3-player games."""
    greedy = load_trusted(resolve_bot("greedy"))
    factory: Any = SandboxFactory(src, Limits(move_seconds=5.0, game_seconds=300.0)) if sandboxed else None
    trusted = None if sandboxed else load_trusted(src)
    cpu, moves = 0.0, 0
    try:
        for g in range(games):
            key = seed + g
            bot = factory(key, 0) if sandboxed else Timed(trusted(key, 0))  # type: ignore[misc]
            players = [bot, greedy(key, 1), greedy(key, 2)]
            try:
                outcome = Referee().play(players, seed=key)
            finally:
                for p in players:
                    p.close()
            assert not outcome.faults, outcome.faults
            cpu += sum(bot.cpu_times)
            moves += len(bot.cpu_times)
    finally:
        if factory is not None:
            factory.close()
    return cpu, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--playouts", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2, help="interleaved repetitions")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.playouts} playouts a move, {args.games} games x {args.rounds} rounds, 3 players, CPU time")
    for mode in ("builtin", "botloop"):
        text = BOT.replace("PLAYOUTS", str(args.playouts)).replace("MODE", repr(mode))
        src = BotSource("playouts", text, f"playouts-{mode}.py")
        rates: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.rounds):
            for sandboxed in (False, True):
                cpu, moves = run(src, sandboxed, args.games, args.seed)
                rates[sandboxed].append(moves * args.playouts / cpu)
        inproc, boxed = statistics.median(rates[False]), statistics.median(rates[True])
        label = "built-in heuristic policy" if mode == "builtin" else "bot-code loop (random actions)"
        print(
            f"{label:>32}: in-process {inproc:8.0f} playouts/s, sandboxed {boxed:8.0f} playouts/s, "
            f"ratio {boxed / inproc:.2f}"
        )


if __name__ == "__main__":
    main()
