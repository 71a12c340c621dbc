"""What the ladder's games cost on disk, and what retention gives back (issue 30, item 1); and how many
games a paced ladder plays over a week.

*Disk.* A contest of three versions plays ``--played`` real games (sandboxed, as the ladder plays
them); their records are stored again as new games (new keys and blocks, the same places and
records) up to ``--games``, as a long ladder would. Then, each on its own copy of the folder:

- *whole*: the folder as it is (every record kept);
- *update*: every record but each version's latest ``--keep`` emptied in place (``UPDATE ... SET
  log = X''``), then ``PRAGMA incremental_vacuum`` and a checkpoint: what SQLite gives back from
  shrunken rows;
- *retention*: :meth:`arena.server.ladder.retention.Retention.prune` (each reduced row deleted and
  written again), then :func:`~arena.server.ladder.retention.shrink` and a checkpoint;
- *vacuum*: the same reduction, then a full ``VACUUM`` (the smallest file SQLite can make; it
  rewrites the whole file through the WAL and locks out every writer meanwhile).

Each prints the folder's bytes, bytes a game, and the seconds it took; the ratings recomputed from
what retention kept are compared with the stored ones.

*Week.* The pace (:mod:`arena.server.ladder.pace`) with OpenSkill ratings on simulated games of
``--bots`` versions of evenly spread true strengths: the games a day over a week at ``--pace``.

    python benchmarks/retention.py [--games 20000] [--played 60] [--keep 100] [--pace 120] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.server.ladder import pace, retention  # noqa: E402
from arena.server.ladder.matchmaker import LadderEntrant, LadderPlayer, pick_table  # noqa: E402
from arena.server.ladder.rating import START_MU, START_SIGMA, rate  # noqa: E402
from arena.server.store import database as store  # noqa: E402


def contest(folder: Path, games: int, played: int) -> None:
    store.init_contest(folder, "Retention")
    db = store.open_db(folder)
    for i, base in enumerate(("greedy", "random", "heuristic"), 1):
        store.invite(db, f"author{i}")
        text = (ROOT / "bots" / f"{base}.py").read_text().replace(f'name = "{base}"', f'name = "{base}x"')
        sid = store.add_submission(db, i, f"{base}x", text.encode())
        store.finish_check(db, sid, {"clean": True}, None)
    player = LadderPlayer(db)
    try:
        while store.games_count(db) < played:
            player.play_block(random.Random(store.games_count(db)))
    finally:
        player.close()
    originals = db.execute("SELECT * FROM games").fetchall()
    rng = random.Random(7)
    while store.games_count(db) < games:
        g = rng.choice(originals)
        seating = json.loads(g["seating"])
        block = store.new_block(db, seating)
        store.record_game(
            db,
            f"b{block}-r0",
            block,
            0,
            seating,
            json.loads(g["places"]),
            json.loads(g["scores"]),
            json.loads(g["faults"]),
            store.unpack(g["log"]),
        )
    db.close()


def copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def measure(folder: Path, games: int, how: str, keep: int) -> dict[str, Any]:
    db = store.open_db(folder)
    began = time.perf_counter()
    if how == "update":
        kept = retention.Retention(db, folder, keep)
        keys = kept.reducible(limit=10**9)
        with store.writing(db):
            db.executemany("UPDATE games SET log = X'' WHERE key = ?", [(k,) for k in keys])
        retention.shrink(db)
    elif how in ("retention", "vacuum"):
        retention.Retention(db, folder, keep).prune()
        if how == "retention":
            retention.shrink(db)
        else:
            db.execute("VACUUM")
    seconds = time.perf_counter() - began
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    same = retention.recompute(db) == {
        (int(r), int(s)): (float(mu), float(sg), int(g))
        for r, s, mu, sg, g in db.execute("SELECT round, submission, mu, sigma, games FROM ratings")
    }
    counts = retention.counts(db)
    db.close()
    size = retention.folder_bytes(folder)
    return {
        "how": how,
        "bytes": size,
        "per_game": size / games,
        "seconds": seconds,
        "whole": counts["whole"],
        "ratings_same": same,
    }


def week(bots: int, per_hour: float, days: int, seed: int) -> tuple[list[int], list[int]]:
    """Games each day of a paced ladder of ``bots`` versions with evenly spread true strengths, and
    each hour of its first six."""
    rng = random.Random(seed)
    strength = [25.0 + 4.0 * (i - (bots - 1) / 2) for i in range(bots)]
    ratings = [(START_MU, START_SIGMA, 0) for _ in range(bots)]
    clock = [0.0]
    pacer = pace.Pacer(pace.Pace(per_hour), lambda: clock[0])
    per_day, per_hour_first = [0] * days, [0] * 6
    while clock[0] < days * 86400:
        entrants = [LadderEntrant(i, f"b{i}", mu, sigma, g) for i, (mu, sigma, g) in enumerate(ratings)]
        table = pick_table(entrants, rng)
        seated = [entrants[i] for i in table]
        pacer.started(len(table), bots, pace.table_information(seated))
        for _ in table:  # the block's games: one a seat rotation
            perf = [rng.gauss(strength[i], pace.BETA) for i in table]
            order = sorted(range(len(table)), key=lambda s: -perf[s])
            places = [order.index(s) + 1 for s in range(len(table))]
            after = rate([ratings[i][:2] for i in table], places)
            for i, (mu, sigma) in zip(table, after, strict=True):
                ratings[i] = (mu, sigma, ratings[i][2] + 1)
            per_day[min(days - 1, int(clock[0] // 86400))] += 1
            if clock[0] < 6 * 3600:
                per_hour_first[int(clock[0] // 3600)] += 1
        pacer.ended()
        clock[0] = max(clock[0] + 1.0, pacer.next_at)
    return per_day, per_hour_first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--played", type=int, default=60)
    parser.add_argument("--keep", type=int, default=100)
    parser.add_argument("--pace", type=float, default=pace.DEFAULT_PACE)
    parser.add_argument("--bots", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        began = time.perf_counter()
        contest(base, opts.games, opts.played)
        made = time.perf_counter() - began
        rows = [
            measure(copy(base, Path(tmp) / how), opts.games, how, opts.keep)
            for how in ("whole", "update", "retention", "vacuum")
        ]
    days, hours = week(opts.bots, opts.pace, 7, 1)
    if opts.json:
        print(json.dumps({"games": opts.games, "keep": opts.keep, "rows": rows, "week": days, "hours": hours}))
        return 0
    print(f"{opts.games} ladder games of 3 versions (made in {made:.0f} s); each version's latest {opts.keep} kept")
    print(f"{'':10} {'folder':>12} {'a game':>10} {'took':>8}  whole  ratings recomputed")
    for r in rows:
        print(
            f"{r['how']:10} {retention.human(r['bytes']):>12} {r['per_game']:>8.0f} B {r['seconds']:>7.2f}s"
            f"  {r['whole']:>5}  {'the same' if r['ratings_same'] else 'DIFFERENT'}"
        )
    print(f"\nA week at --pace {opts.pace:g} with {opts.bots} versions (simulated games, OpenSkill ratings):")
    print(f"  games in each of the first six hours {hours}; each day {days}; {sum(days)} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
