"""Searching ahead over the wire (docs/protocol.md, "Searching ahead"): what a program's
``simulate`` costs against the same playouts in-process.

A node program, on its first move of each game, times (``process.hrtime``) a few tiny
``sample`` requests (the round trip: the per-request overhead) and one ``simulate`` of
WORLDS worlds x PLANS plans (heuristic playouts to the end of the round), and says the
numbers. In-process, the same position's turn is sampled and played out with
:mod:`arena.botapi.forward` (the same worlds and rollouts: one ``Searcher`` answer, and the bare
loop). Run: ``python benchmarks/wire_search.py [--games N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from arena.botapi.forward import sampler
from arena.botapi.turn import PublicFeed, Turn
from arena.game.referee import EngineTable, Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits
from arena.sandbox.programs.runtimes import program_factory
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import read_bot_file

WORLDS, PLANS, SAMPLES = 100, 8, 20

PROGRAM = """
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
let t0 = 0n, asked = 0, small = [];
const now = () => process.hrtime.bigint();
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.type === "start_game") { asked = 0; small = []; send({ type: "ready" }); }
  else if (m.type === "move" && asked > 0) send({ action: "error", message: "done" });
  else if (m.type === "move" || m.type === "sampled") {
    if (m.type === "sampled") small.push(Number(now() - t0) / 1e6);
    asked++;
    t0 = now();
    if (small.length < SAMPLES) send({ action: "sample", seed: asked });
    else send({ action: "simulate", seed: 1, worlds: WORLDS, plans: Array.from({ length: PLANS }, () => []) });
  } else if (m.type === "simulated") {
    const ms = Number(now() - t0) / 1e6;
    send({ action: "say", text: "T " + ms.toFixed(3) + " " + small.slice(1).join(",") });
    send({ action: "error", message: "done" });
  }
});
"""


def in_process(game_seed: int) -> tuple[float, float]:
    """Seconds of one WORLDS x PLANS simulate at the first move of a game, in-process: the bare
    forward-model loop, and the referee's handler (which adds only the answer's dicts)."""
    from arena.game.engine import Game
    from arena.sandbox.programs.simulate import Searcher

    game = Game(2, seed=game_seed, rules=CONTEST)
    game.start_round()
    table = EngineTable(game, game.mover, ("a", "b"), PublicFeed())
    t0 = time.perf_counter()
    sample = sampler(Turn(game.move, EngineTable(game, game.mover, ("a", "b"), PublicFeed())))
    rng = random.Random(1)
    for world in [sample(rng) for _ in range(WORLDS)]:
        for _ in range(PLANS):
            w = world.clone()
            w.play_move()
            w.playout()
            w.scores(), w.points(), w.places()
    bare = time.perf_counter() - t0
    s = Searcher()
    s.names = ("a", "b")
    req = {"action": "simulate", "seed": 1, "worlds": WORLDS, "plans": [[]] * PLANS}
    req.update(policy="heuristic", until="round", max_moves=1000)
    t0 = time.perf_counter()
    s.answer(table, req, 1e9)
    return bare, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "timer.js"
        code = PROGRAM.replace("SAMPLES", str(SAMPLES)).replace("WORLDS", str(WORLDS))
        path.write_text(code.replace("PLANS", str(PLANS)))
        src = read_bot_file(path)
        factory = program_factory(src, Limits(move_seconds=20.0, game_seconds=60.0, load_seconds=5.0))
        greedy = load_trusted(resolve_bot("greedy"))
        wire, small = [], []
        for g in range(args.games):
            players = [factory(g, 0), greedy(g, 1)]
            try:
                out = Referee(CONTEST.replace(max_rounds=1)).play(players, seed=g, bots=["timer", "greedy"])
            finally:
                for p in players:
                    p.close()
            said = next(e["text"] for e in out.log if e["event"] == "say" and e["text"].startswith("T "))
            _, ms, rest = said.split(" ")
            wire.append(float(ms) / 1000)
            small += [float(x) / 1000 for x in rest.split(",") if x]
        factory.close()
    local = [in_process(g) for g in range(args.games)]
    n = WORLDS * PLANS
    bare, handler = statistics.median(b for b, _ in local), statistics.median(h for _, h in local)
    print(f"simulate {WORLDS} worlds x {PLANS} plans = {n} heuristic playouts to the end of the round")
    print(f"  in-process loop (arena.botapi.forward): {bare * 1000:8.1f} ms  {n / bare:8.0f} playouts/s")
    print(f"  referee's handler alone:         {handler * 1000:8.1f} ms  {n / handler:8.0f} playouts/s")
    over = statistics.median(wire)
    print(f"  through the wire (node):         {over * 1000:8.1f} ms  {n / over:8.0f} playouts/s")
    print(f"a tiny request's round trip (sample, median of {len(small)}): {statistics.median(small) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
