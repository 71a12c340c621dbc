"""Builds outside the server (issue 27, item 3): ``arena tournament`` and ``arena play`` build each
bot program once per run, whatever their workers (they built once per worker process, ``arena
play`` once more in its parent), and ``arena tournament --build-cache DIR`` keeps the builds for
later runs, read back checked (ruling 127)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.builds import BuildWatch, folder_with_build, marker
from support.cli import run_process

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds run sandboxed only as root")


def standings(db: Path) -> list[tuple[str, int, int, float, int]]:
    """Each bot's (label, games, wins, average place, faults)."""
    done = run_process("standings", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["overall"]["standings"]
    return sorted((r["bot"], r["games"], r["wins"], r["avg_place"], r["faults"]) for r in rows)


def test_a_tournament_builds_each_program_once_whatever_its_workers(tmp_path: Path) -> None:
    mark = marker()
    bot = folder_with_build(tmp_path, "built", f"sleep 1; : {mark}")
    with BuildWatch(mark) as watch:
        done = run_process(
            "tournament", str(bot), "greedy", "random", "--workers", "2", "--games", "2",
            "--db", str(tmp_path / "t.db"), "--quiet", "--seed", "5", timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert watch.builds == 1  # it was 2: once in each worker process
    mine = next(row for row in standings(tmp_path / "t.db") if row[0] == "built")
    assert mine[1] > 0 and mine[4] == 0  # it played, and built files ran: no crash


def test_arena_play_with_workers_builds_once(tmp_path: Path) -> None:
    mark = marker()
    bot = folder_with_build(tmp_path, "played", f"sleep 1; : {mark}")
    with BuildWatch(mark) as watch:
        done = run_process("play", str(bot), "greedy", "--games", "6", "--workers", "2", "--seed", "3", timeout=300)
    assert done.returncode == 0, done.stderr
    assert watch.builds == 1  # it was 3: the parent's, then each forked worker's


def test_a_build_cache_serves_later_runs_and_a_damaged_entry_is_built_again(tmp_path: Path) -> None:
    mark = marker()
    bot = folder_with_build(tmp_path, "cached", f"sleep 1; : {mark}")
    cache = tmp_path / "cache"
    counts = []
    for run in range(3):
        if run == 2:  # damage the entry: it is built again, never trusted
            entry = next((cache / "objects").iterdir())
            entry.write_bytes(entry.read_bytes()[:-1] + b"?")
        with BuildWatch(mark) as watch:
            done = run_process(
                "tournament", str(bot), "greedy", "--games", "2", "--workers", "1", "--db", str(tmp_path / f"{run}.db"),
                "--quiet", "--seed", "9", "--build-cache", str(cache), timeout=300,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        counts.append(watch.builds)
    assert counts == [1, 0, 1]
    assert standings(tmp_path / "0.db") == standings(tmp_path / "1.db") == standings(tmp_path / "2.db")
    assert len(list((cache / "objects").iterdir())) == 1  # the same build, the same entry, whole again


def test_a_failed_build_is_warned_of_once_and_its_bot_crashes_in_each_game(tmp_path: Path) -> None:
    mark = marker()
    bot = folder_with_build(tmp_path, "broken", f"sleep 1; : {mark}; echo 'bot.cpp:9: error: nope' >&2; exit 1")
    with BuildWatch(mark) as watch:
        done = run_process(
            "tournament", str(bot), "greedy", "random", "--workers", "2", "--games", "1",
            "--db", str(tmp_path / "t.db"), "--quiet", "--seed", "4", timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert watch.builds == 1
    warned = [line for line in done.stderr.splitlines() if "the build failed" in line]
    assert len(warned) == 1 and "bot.cpp:9: error: nope" in warned[0] and "recorded as crashed" in warned[0]


def test_a_build_cache_that_is_not_a_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine")
    done = run_process(
        "tournament", "greedy", "random", "--build-cache", str(tmp_path / "file"), "--db", str(tmp_path / "t.db")
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a folder" in done.stderr, done.stderr
    assert (tmp_path / "file").read_text() == "mine" and not (tmp_path / "t.db").exists()


def test_a_factory_made_again_after_its_eviction_builds_nothing(tmp_path: Path) -> None:
    # a runner keeps `keep` factories; past it the least recently used is closed and made again
    # when its bot plays next: each time a build, unless the parent's build came with the source
    from arena.game.rules import CONTEST
    from arena.tournament.backends.games import GameRunner
    from arena.tournament.builds import prebuild
    from arena.tournament.runner import plan

    mark = marker()
    bots = [str(folder_with_build(tmp_path, f"ev{i}", f"sleep 1; : {mark} {i}")) for i in range(2)]
    with BuildWatch(mark) as watch:
        p = prebuild(plan([*bots, "greedy"], sizes=[2], deals=2, seed=1, rules=CONTEST))
        runner = GameRunner(p.job(), keep=1)  # the two programs evict each other game after game
        try:
            records = [runner.play(key) for key in p.schedule.keys()]
        finally:
            runner.close()
    assert watch.builds == 2 and len(records) == p.schedule.total_games
    assert all(sum(r.faults) == 0 for r in records)
