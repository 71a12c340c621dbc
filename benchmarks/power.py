"""Games needed to rank a ladder of known order, and how often a method is wrong while
claiming separation: adaptive (``--until-separated``) against the fixed duplicate round
robin and against single games of fresh deals.

    python benchmarks/power.py [--quick] [--reps 200] [--deals 100] [--pool FILE] [--live 2] [--method legacy]
    python benchmarks/power.py --pools 11,12,13,14,15 --pool-dir DIR --bound 200

The ladder (``benchmarks/ladder.py``): the reference heuristic with 0, 15, 30, 45, 60
and 80% random moves, six bots at 4-player tables, in-process (trusted). The script

1. plays a *pool*: the full round robin (15 tables) with ``--deals`` duplicate deals per
   table (``--pool FILE`` keeps it in a tournament database and reuses it); ``--pools
   S,S,...`` plays one pool per seed (kept in ``--pool-dir``) and merges them into one
   world of ``len(S) x --deals`` deals per table, the closest model of the ladder itself
   (one pool's per-table means are uncertain by about 0.03, five pools' by about 0.012);
2. treats the pool as the world (every table's deals resampled with replacement) and
   runs each method ``--reps`` times with a fresh random stream, counting the games it
   plays until it claims that every adjacent pair is separated, and whether that order
   is the pool's (which is the known order; the script checks);
3. with ``--live N`` also runs the real ``arena tournament --until-separated`` for N seeds.

Methods (every one stops at the first look at which all adjacent pairs are separated):

* ``adaptive``: the tournament's own :class:`~arena.tournament.plan.adaptive.State` (first round
  one deal per table, then rounds of up to 4 blocks where the pairs are unsettled, fewer
  near the end); its anytime-valid test: per pair a mixture betting test on the paired
  block differences, decided by Holm's step-down over the 30 directional claims
  (``--method legacy``: the online-Newton sign test with Bonferroni, rounds of 4, as
  databases made before it replay).
* ``fixed-rr sequential``: the same test and stopping rule, but every round is one more
  duplicate deal at each of the 15 tables (60 games).
* ``fresh sequential``: the same, but every round is one single game (a fresh deal,
  seats shuffled, no rotations) at each table (15 games); a "block" is one game.
* ``fixed-rr naive`` / ``fresh naive``: the round robin looked at after every round with a
  fixed-sample 95% paired t-interval per adjacent pair: what "play more until the
  intervals separate" does; it is not valid under repeated looks.

On the ladder every method's claims come out right (its gaps are wide enough), so a
second, *null* world tests the error rate: bots 1 and 2 are made equal (their labels
swapped in half the resampled deals), and any claim that every adjacent pair is
separated is then wrong. ``--quick`` (pool of 40 deals, 40 and 20 repetitions) takes
about a minute on a quiet core.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from ladder import EPSILONS, ladder_files  # noqa: E402

from arena.game.rules import CONTEST  # noqa: E402
from arena.tournament.db.database import TournamentDBError, open_readonly, read_games  # noqa: E402
from arena.tournament.plan.adaptive import LEGACY_METHOD, METHOD, Design, State  # noqa: E402
from arena.tournament.plan.schedule import GameKey  # noqa: E402
from arena.tournament.results.standings import t975  # noqa: E402
from arena.tournament.runner import local_backend, plan, run  # noqa: E402

SIZE = 4
#: The sequential method every method here is held to (``--method``).
TEST = {"method": METHOD}
Pool = dict[int, list[dict[str, list]]]  # table -> deals -> {"block": rows, "fresh": [row]}


def build_pool(folder: Path, db: Path, deals: int, seed: int) -> Pool:
    files = ladder_files(folder)
    p = plan(files, sizes=[SIZE], deals=deals, seed=seed, rules=CONTEST, trusted=True)
    started = time.perf_counter()
    result = run(p, db, local_backend(1))  # resumes (plays nothing) when the pool exists
    if result.played:
        print(f"pool: played {result.played} games in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    conn, _ = open_readonly(db)
    games = {g.key: g for g in read_games(conn)}
    conn.close()
    pool: Pool = {}
    for t in range(len(p.schedule.sizes[0].tables)):
        pool[t] = []
        for d in range(deals):
            rows = [games[GameKey(SIZE, t, d, r)] for r in range(SIZE)]
            pool[t].append({"block": rows, "fresh": rows[:1]})
    return pool


def merged_pool(folder: Path, pool_dir: Path, deals: int, seeds: list[int]) -> Pool:
    """One world from several pools: every table's deals of every seed's pool (the same
    bots at the same table numbers, independent deals)."""
    world: Pool = {}
    for seed in seeds:
        for t, deals_t in build_pool(folder, pool_dir / f"pool{seed}.sqlite", deals, seed).items():
            world.setdefault(t, []).extend(deals_t)
    return world


def draw(pool: Pool, t: int, rng: random.Random, kind: str, null: bool) -> list:
    """A resampled deal of table ``t`` (its ``block`` or its ``fresh`` single game). With
    ``null``, bots 1 and 2 trade places in half the draws: a world in which they are equal."""
    rows = rng.choice(pool[t])[kind]
    if null and rng.random() < 0.5:
        swap = {1: 2, 2: 1}
        rows = [
            dataclasses.replace(g, seats=tuple(s._replace(bot=swap.get(s.bot, s.bot)) for s in g.seats)) for g in rows
        ]
    return rows


def tables_of(n: int) -> tuple[tuple[int, ...], ...]:
    import itertools

    return tuple(itertools.combinations(range(n), SIZE))


def adaptive_method(pool: Pool, rng: random.Random, budget: int, null: bool = False) -> tuple[int, list[int], bool]:
    design = Design(len(EPSILONS), SIZE, tables_of(len(EPSILONS)), method=TEST["method"])
    s = State(design)
    games = 0
    while True:
        for block in s.plan()[s.absorbed :]:
            s.absorb(block, draw(pool, block[0], rng, "block", null))
            games += SIZE
        if not s.uncertain():
            return games, s.order(), True
        if games >= budget:
            return games, s.order(), False
        s._add_round(s.next_round())


def sequential_rr(
    pool: Pool, rng: random.Random, budget: int, kind: str, null: bool = False
) -> tuple[int, list[int], bool]:
    """Round robin sweeps with the adaptive test and stopping rule (``kind``: block or fresh)."""
    design = Design(len(EPSILONS), SIZE, tables_of(len(EPSILONS)), method=TEST["method"])
    s = State(design)
    games = 0
    while games < budget:
        for t in pool:
            rows = draw(pool, t, rng, kind, null)
            s.absorb((t, 0), rows)
            games += len(rows)
        if not s.uncertain():
            return games, s.order(), True
    return games, s.order(), False


def naive_rr(pool: Pool, rng: random.Random, budget: int, kind: str, null: bool = False) -> tuple[int, list[int], bool]:
    """Round robin sweeps, a fixed-sample paired t-interval per adjacent pair after each sweep."""
    n = len(EPSILONS)
    diffs: dict[tuple[int, int], list[float]] = {}
    score = [0.0] * n
    seats = [0] * n
    games = 0
    while games < budget:
        for t in pool:
            rows = draw(pool, t, rng, kind, null)
            games += len(rows)
            per: dict[int, list[float]] = {}
            for g in rows:
                for bot, place, *_ in g.seats:
                    per.setdefault(bot, []).append((SIZE - place) / (SIZE - 1))
            m = {b: statistics.fmean(v) for b, v in per.items()}
            for b, v in m.items():
                score[b] += v
                seats[b] += 1
            for a in m:
                for b in m:
                    if a < b:
                        diffs.setdefault((a, b), []).append(m[a] - m[b])
        order = sorted(range(n), key=lambda b: (-score[b] / seats[b], b))
        ok = True
        for up, low in zip(order, order[1:], strict=False):
            v = diffs[(min(up, low), max(up, low))]
            v = v if up < low else [-x for x in v]
            if len(v) < 2:
                ok = False
                break
            mean, sd = statistics.fmean(v), statistics.stdev(v)
            if mean - t975(len(v) - 1) * sd / math.sqrt(len(v)) <= 0:
                ok = False
                break
        if ok:
            return games, order, True
    return games, order, False


def _vertices(rows: list[tuple[int, ...]]) -> list[tuple[Fraction, ...]]:
    """Vertices of ``{y >= 0 : row . y <= 1 for every row}`` (rows of 0/1), by solving every
    choice of ``len(y)`` tight constraints exactly."""
    n = len(rows[0])
    planes = [(r, Fraction(1)) for r in set(rows)] + [
        (tuple(int(i == j) for j in range(n)), Fraction(0)) for i in range(n)
    ]
    found = set()
    for chosen in itertools.combinations(planes, n):
        m = [[Fraction(v) for v in r] + [b] for r, b in chosen]
        for col in range(n):  # Gauss-Jordan; skip singular choices
            piv = next((i for i in range(col, n) if m[i][col] != 0), None)
            if piv is None:
                break
            m[col], m[piv] = m[piv], m[col]
            m[col] = [v / m[col][col] for v in m[col]]
            for i in range(n):
                if i != col and m[i][col] != 0:
                    m[i] = [a - m[i][col] * b for a, b in zip(m[i], m[col], strict=True)]
        else:
            y = tuple(m[i][n] for i in range(n))
            if all(v >= 0 for v in y) and all(sum(a * b for a, b in zip(r, y, strict=True)) <= 1 for r in rows):
                found.add(y)
    return sorted(found)


def clairvoyant_bound(pool: Pool, reps: int) -> None:
    """How far any allocation could go: each adjacent pair's test is run alone on the pool's
    paired differences of that pair (all tables) until it decides at the first claim's bar,
    giving the blocks ``T_p`` it needs; the round robin needs ``15 / 6 * max T_p`` blocks (a pair
    sits at 6 of its 15 tables); an allocation that knew every ``T_p`` in advance needs the
    least number of blocks whose tables give each pair ``T_p`` of them (a linear programme,
    solved exactly through its dual's vertices)."""
    from arena.tournament.results.stats import MixtureTest, pair_alpha

    n = len(EPSILONS)
    tables = tables_of(n)
    rows = [tuple(int(p in t and p + 1 in t) for p in range(n - 1)) for t in tables]
    vertices = _vertices(rows)
    diffs: dict[int, list[float]] = {p: [] for p in range(n - 1)}
    for deals in pool.values():
        for deal in deals:
            per: dict[int, list[float]] = {}
            for g in deal["block"]:
                for bot, place, *_ in g.seats:
                    per.setdefault(bot, []).append((SIZE - place) / (SIZE - 1))
            for p in range(n - 1):
                if p in per and p + 1 in per:
                    diffs[p].append(statistics.fmean(per[p]) - statistics.fmean(per[p + 1]))
    alpha = pair_alpha(0.95, math.comb(n, 2))
    best, rr = [], []
    for r in range(reps):
        rng = random.Random(f"bound/{r}")
        need = []
        for p in range(n - 1):
            test = MixtureTest(alpha)
            while not test.decided:
                test.add(rng.choice(diffs[p]))
            need.append(test.n)
        best.append(float(max(sum(y * t for y, t in zip(v, need, strict=True)) for v in vertices)))
        rr.append(len(tables) / sum(rows[t][0] for t in range(len(tables))) * max(need))
    print(
        f"clairvoyant bound ({reps} draws of the blocks each adjacent pair needs alone): an allocation knowing "
        f"them needs {statistics.fmean(best):.0f} blocks, the round robin {statistics.fmean(rr):.0f}: "
        f"{statistics.fmean(best) / statistics.fmean(rr):.2f} of its games at best"
    )


def summarise(name: str, results: list[tuple[int, list[int], bool]], truth: list[int]) -> dict[str, float]:
    games = [g for g, _, claimed in results if claimed]
    claimed = len(games)
    wrong = sum(1 for _, order, c in results if c and order != truth)
    row = {
        "claimed": claimed,
        "reps": len(results),
        "median": statistics.median(games) if games else math.nan,
        "mean": statistics.fmean(games) if games else math.nan,
        "wrong": wrong,
    }
    print(
        f"  {name:<20} {row['mean']:8.0f} {row['median']:8.0f} "
        f"{min(games) if games else 0:6d}-{max(games) if games else 0:<6d} {claimed:4d}/{len(results):<4d} "
        f"{wrong:4d} ({wrong / max(1, claimed):.1%})"
    )
    return row


def live(folder: Path, seeds: int, workdir: Path) -> None:
    from arena.tournament.plan.adaptive import run as run_adaptive

    files = ladder_files(folder)
    print(f"live: arena tournament --until-separated on the ladder, {seeds} seeds")
    for seed in range(seeds):
        p = plan(files, sizes=[SIZE], deals=1, seed=1000 + seed, rules=CONTEST, trusted=True)
        size = p.schedule.sizes[0]
        design = Design(len(files), SIZE, size.tables)
        started = time.perf_counter()
        result = run_adaptive(p, design, str(workdir / f"live{seed}.sqlite"), local_backend(1), budget=None)
        order = result.state.order()
        print(
            f"  seed {1000 + seed}: {result.stored} games, {result.status}, order "
            f"{'exact' if order == list(range(len(files))) else [EPSILONS[b] for b in order]} "
            f"({time.perf_counter() - started:.0f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller pool and fewer repetitions")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per method (default 200, quick 40)")
    parser.add_argument("--deals", type=int, default=None, help="pool deals per table (default 100, quick 40)")
    parser.add_argument("--pool", help="keep the pool in this tournament database (reused when it exists)")
    parser.add_argument("--seed", type=int, default=11, help="the pool's tournament seed")
    parser.add_argument(
        "--pools", help="comma-separated seeds: one pool each, merged into one world (with --pool-dir to keep them)"
    )
    parser.add_argument("--pool-dir", help="where --pools keeps its pools (default: a temporary folder)")
    parser.add_argument("--budget", type=int, default=30000, help="games after which a method gives up")
    parser.add_argument("--live", type=int, default=0, metavar="N", help="also run N real adaptive tournaments")
    parser.add_argument(
        "--null-reps", type=int, default=None, help="repetitions in the null world (default 100, quick 20)"
    )
    parser.add_argument("--null-budget", type=int, default=6000, help="games per run in the null world")
    parser.add_argument(
        "--method", choices=("current", "legacy"), default="current", help="the sequential test (default current)"
    )
    parser.add_argument(
        "--bound", type=int, default=0, metavar="N", help="also the clairvoyant allocation's bound over N draws"
    )
    parser.add_argument(
        "--only", help="comma-separated methods to run (e.g. 'adaptive,fixed-rr sequential'; default all)"
    )
    args = parser.parse_args()
    TEST["method"] = METHOD if args.method == "current" else LEGACY_METHOD
    reps = args.reps or (40 if args.quick else 200)
    deals = args.deals or (40 if args.quick else 100)
    if args.null_reps is None:
        args.null_reps = 20 if args.quick else 100
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.pools:
            try:
                seeds = [int(x) for x in args.pools.split(",")]
            except ValueError:
                parser.error(f"--pools wants comma-separated seeds, not {args.pools!r}")
            pool_dir = Path(args.pool_dir) if args.pool_dir else work
            pool_dir.mkdir(parents=True, exist_ok=True)
            pool = merged_pool(work / "ladder", pool_dir, deals, seeds)
            deals *= len(seeds)
        else:
            db = Path(args.pool) if args.pool else work / "pool.sqlite"
            pool = build_pool(work / "ladder", db, deals, args.seed)
        n = len(EPSILONS)
        design = Design(n, SIZE, tables_of(n))
        world = State(design)
        for t, deals_t in pool.items():
            for d in deals_t:
                world.absorb((t, 0), d["block"])
        truth = world.order()
        print(
            f"ladder: heuristic with {', '.join(f'{e}%' for e in EPSILONS)} random moves; pool of "
            f"{deals} duplicate deals x 15 tables x 4 seatings = {deals * 60} games; pool order "
            f"{'= the known order' if truth == list(range(n)) else [EPSILONS[b] for b in truth]}"
        )
        means = [world.report((truth[i], truth[i + 1])).mean for i in range(n - 1)]
        print("pool's adjacent paired differences: " + ", ".join(f"{m:+.3f}" for m in means))
        print(
            f"{reps} repetitions per method, resampling the pool's deals; 95%; test {TEST['method']}; games "
            f"until all adjacent pairs are claimed separated:"
        )
        print(f"  {'method':<20} {'mean':>8} {'median':>8} {'range':>13} {'claimed':>9} {'wrong while claiming':>22}")
        methods: list[tuple[str, Callable[[random.Random], tuple[int, list[int], bool]]]] = [
            ("adaptive", lambda rng: adaptive_method(pool, rng, args.budget)),
            ("fixed-rr sequential", lambda rng: sequential_rr(pool, rng, args.budget, "block")),
            ("fresh sequential", lambda rng: sequential_rr(pool, rng, args.budget, "fresh")),
            ("fixed-rr naive", lambda rng: naive_rr(pool, rng, args.budget, "block")),
            ("fresh naive", lambda rng: naive_rr(pool, rng, args.budget, "fresh")),
        ]
        only = None if args.only is None else {m.strip() for m in args.only.split(",")}
        rows = {}
        for name, method in methods:
            if only is None or name in only:
                rows[name] = summarise(name, [method(random.Random(f"{name}/{r}")) for r in range(reps)], truth)
        if "adaptive" in rows and "fixed-rr sequential" in rows:
            a, f = rows["adaptive"], rows["fixed-rr sequential"]
            print(
                f"adaptive / fixed round robin (same test): {a['mean'] / f['mean']:.2f} of the games (mean), "
                f"{a['median'] / f['median']:.2f} (median)"
            )
        if args.null_reps:
            print(
                f"null world: bots 1 and 2 ({EPSILONS[1]}% and {EPSILONS[2]}%) made equal (their labels swapped "
                f"in half the resampled deals); {args.null_reps} repetitions, budget {args.null_budget} games; any "
                f"claim that every adjacent pair is separated is wrong:"
            )
            print(f"  {'method':<20} {'claimed (wrongly)':>18}")
            b = args.null_budget
            for name, method in [
                ("adaptive", lambda rng: adaptive_method(pool, rng, b, True)),
                ("fixed-rr sequential", lambda rng: sequential_rr(pool, rng, b, "block", True)),
                ("fixed-rr naive", lambda rng: naive_rr(pool, rng, b, "block", True)),
                ("fresh naive", lambda rng: naive_rr(pool, rng, b, "fresh", True)),
            ]:
                if only is not None and name not in only:
                    continue
                claims = sum(method(random.Random(f"null/{name}/{r}"))[2] for r in range(args.null_reps))
                print(f"  {name:<20} {claims:>7}/{args.null_reps} ({claims / args.null_reps:.1%})")
        if args.bound:
            clairvoyant_bound(pool, args.bound)
        if args.live:
            live(work / "ladder", args.live, work)


if __name__ == "__main__":
    try:
        main()
    except TournamentDBError as exc:  # a --pool that is not this benchmark's database: one line, the file untouched
        sys.exit(f"power.py: error: {exc}")
