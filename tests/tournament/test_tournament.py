"""``arena tournament`` end to end: parallel runs agree, kills and Ctrl-C resume to the
same standings, changed bots or settings are refused, faulting bots are recorded."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run as run_cli

from arena.cli import main

BOTS = ["greedy", "random", "greedy", "random", "random", "greedy"]
ARGS = ["--games", "8", "--seed", "3", "--quiet"]  # 15 tables x 8 deals x 4 seatings = 480 games
TOTAL = 480

FAULTY = '''"""Raises on every move."""
class Bot:
    def move(self, turn):
        raise RuntimeError("boom")
'''
FLAKY = '''"""Raises now and then (seeded random), otherwise plays like greedy."""
import random
class Bot:
    def move(self, turn):
        if random.random() < 0.05:
            raise ValueError("flaky")
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(max(options, key=lambda c: c.points), "h" if options[0].rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''
BROKEN = "class Bot:\n    def move(self, turn)\n        pass\n"
PLAIN = '''"""Draws when it can, else puts the first card."""
class Bot:
    def move(self, turn):
        options = turn.puttable()
        while options:
            turn.put(options[0], "s" if options[0].rank == "j" else None)
            options = turn.puttable()
        if not turn.can_finish() and turn.can_draw():
            turn.draw()
            options = turn.puttable()
            while not turn.can_finish() and (options or turn.can_draw()):
                if options:
                    turn.put(options[0], "s" if options[0].rank == "j" else None)
                else:
                    turn.draw()
                options = turn.puttable()
        turn.finish()
'''


def standings(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "standings", "--db", str(db), "--json")
    assert code == 0, err
    doc = json.loads(out)
    doc.pop("db")
    return doc


def count_games(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def whole_streams(db: Path, deals: int = 8) -> bool:
    """Every stream (a table's rotation over its deals) the database holds a game of, it holds whole."""
    from arena.tournament.plan.schedule import STREAM_DEALS, GameKey, stream_of

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        keys = {GameKey(*row) for row in conn.execute("SELECT size, tbl, deal, rotation FROM games")}
    finally:
        conn.close()
    for size, table, rotation, part in {stream_of(k) for k in keys}:
        run = range(part * STREAM_DEALS, min(deals, (part + 1) * STREAM_DEALS))
        if any(GameKey(size, table, d, rotation) not in keys for d in run):
            return False
    return True


def spawn(db: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", *BOTS, *ARGS, "--db", str(db), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for_games(proc: subprocess.Popen[str], db: Path, at_least: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = count_games(db) if db.exists() else 0
        if n >= at_least:
            return n
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no games stored in time")


def live_in_group(pgid: int, workers_only: bool = False) -> list[int]:
    """Processes of the group that are still running (zombies waiting for a reaper do not
    count; with ``workers_only`` neither does multiprocessing's resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()  # state, ppid, pgrp, ...
            if int(fields[2]) == pgid and fields[0] != "Z":
                if not (workers_only and b"resource_tracker" in cmdline):
                    found.append(int(entry.name))
    return found


def group_gone(pgid: int, timeout: float = 10, workers_only: bool = False) -> bool:
    """True once no process of the group is left (workers do not outlive their parent)."""
    if not Path("/proc/self/stat").exists():
        return True
    deadline = time.monotonic() + timeout
    while live_in_group(pgid, workers_only):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The standings of an uninterrupted single-process run."""
    db = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    assert main(["tournament", *BOTS, *ARGS, "--workers", "1", "--db", str(db)]) == 0
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == TOTAL
    conn.close()
    return standings_apart(db)


def standings_apart(db: Path) -> dict[str, Any]:
    """``arena standings --json`` of ``db`` from a process of its own (the database's path left out)."""
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "standings", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(proc.stdout)
    doc.pop("db")
    return doc


def test_two_workers_same_standings(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "w2.sqlite"
    code, out, err = run_cli(capsys, "tournament", *BOTS, *ARGS, "--workers", "2", "--db", str(db), "--json")
    assert code == 0, err
    doc = json.loads(out)
    doc.pop("db")
    assert doc == reference
    assert doc["games"] == doc["total"] == TOTAL
    assert [r["games"] for r in doc["overall"]["standings"]] == [320] * 6
    # table output of the same database
    code, out, _ = run_cli(capsys, "standings", "--db", str(db))
    assert code == 0 and "Overall: 480 games in 120 duplicate deals" in out and "head-to-head" in out


@pytest.mark.long
def test_kill_9_twice_then_resume_gives_identical_standings(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "killed.sqlite"
    stored = 0
    for at_least in (40, 200):
        proc = spawn(db, "--workers", "2")
        wait_for_games(proc, db, max(at_least, stored + 20))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        assert group_gone(proc.pid)  # orphaned workers notice the closed pipe and exit
        n = count_games(db)
        assert stored < n < TOTAL
        assert whole_streams(db)  # a stream is stored whole or not at all: a resume re-runs it from its start
        stored = n
    code, _, err = run_cli(capsys, "tournament", *BOTS, *ARGS[:-1], "--workers", "2", "--db", str(db))
    assert code == 0
    assert f"resuming: {stored} of {TOTAL} games already in" in err
    assert standings(capsys, db) == reference


@pytest.mark.long
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "interrupted.sqlite"
    proc = spawn(db, "--workers", "2")
    wait_for_games(proc, db, 30)
    os.killpg(proc.pid, signal.SIGINT)  # the terminal sends it to the whole process group
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert group_gone(proc.pid, timeout=0.5, workers_only=True)  # the workers were stopped before the exit
    assert group_gone(proc.pid)
    n = count_games(db)
    assert 0 < n < TOTAL
    assert f"interrupted: {n} of {TOTAL} games are stored in {db}" in err
    assert "Resume with:\n  arena tournament greedy random" in err and "Traceback" not in err
    code, _, _ = run_cli(capsys, "tournament", *BOTS, *ARGS, "--workers", "2", "--db", str(db))
    assert code == 0
    assert standings(capsys, db) == reference


def write_bots(folder: Path, **sources: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in sources.items():
        path = folder / f"{name}.py"
        path.write_text(text)
        paths.append(path)
    return paths


def test_changed_bot_or_settings_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (plain,) = write_bots(tmp_path, plain=PLAIN)
    db = tmp_path / "t.sqlite"
    base = ["tournament", "greedy", "random", str(plain), "--trusted", "-n", "2", "-q", "--db", str(db)]
    assert run_cli(capsys, *base)[0] == 0
    before = db.read_bytes()
    checks = [
        (base + ["--seed", "1"], "other settings (seed was a secret one, now 1)"),  # never shown
        (base + ["--rule", "limit=101"], "rules.limit was 125, now 101"),
        (base + ["--players", "2"], "other settings"),
        (base[:1] + ["greedy", "random", "random"] + base[4:], "other bots (missing plain; new random#2)"),
    ]
    for argv, message in checks:
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and message in err and err.count("\n") == 1, err
    plain.write_text(PLAIN.replace("options[0]", "options[-1]"))
    code, _, err = run_cli(capsys, *base)
    assert code == 2 and "bot plain" in err and "had other code" in err and err.count("\n") == 1
    assert db.read_bytes() == before
    plain.write_text(PLAIN)
    code, _, err = run_cli(capsys, *base)
    assert code == 0 and "resuming" not in err  # -q: no chatter; nothing left to play
    assert count_games(db) == 6  # three bots: one table of 3, 2 deals, 3 seatings


def test_faulting_and_crashing_bots_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_bots(tmp_path / "subs", faulty=FAULTY, flaky=FLAKY, broken=BROKEN, plain=PLAIN)
    (tmp_path / "subs" / "plain.json").write_text('{"manifest": "written by arena submit"}')
    db = tmp_path / "f.sqlite"
    code, out, err = run_cli(
        capsys,
        "tournament",
        str(tmp_path / "subs"),
        "greedy",
        "--trusted",
        "-n",
        "2",
        "--workers",
        "2",
        "--db",
        str(db),
        "--json",
    )
    assert code == 0, err
    assert "broken.py:2: syntax error" in err and "recorded as crashed" in err
    doc = json.loads(out)
    labels = [b["label"] for b in doc["bots"]]
    assert labels == ["broken", "faulty", "flaky", "plain", "greedy"]  # folder in name order, no manifest
    assert doc["games"] == doc["total"] == 5 * 2 * 4
    rows = {r["bot"]: r for r in doc["overall"]["standings"]}
    assert (
        rows["faulty"]["faults"] == 3 * rows["faulty"]["games"] and rows["faulty"]["retired"] == rows["faulty"]["games"]
    )
    assert rows["broken"]["retired"] == rows["broken"]["games"] == 32
    assert rows["broken"]["faults"] == 32
    assert 0 < rows["flaky"]["faults"] and rows["flaky"]["retired"] < rows["flaky"]["games"]
    assert rows["greedy"]["faults"] == rows["plain"]["faults"] == 0
    conn = sqlite3.connect(db)
    kinds = dict(
        conn.execute(
            "SELECT kind, COUNT(*) FROM faults f JOIN bots b USING (bot) WHERE b.label = 'broken' GROUP BY kind"
        ).fetchall()
    )
    assert kinds == {"crash": 32, "retired": 32}
    detail = conn.execute(
        "SELECT detail FROM faults f JOIN bots b USING (bot) WHERE b.label = 'faulty' AND kind = 'exception' LIMIT 1"
    ).fetchone()[0]
    assert "RuntimeError: boom" in detail
    # a retired bot places after every bot still playing
    ahead = conn.execute(
        "SELECT COUNT(*) FROM results r JOIN bots b USING (bot) WHERE b.label = 'broken' AND "
        "EXISTS (SELECT 1 FROM results o WHERE o.game_id = r.game_id AND o.retired = 0 "
        "AND o.place >= r.place)"
    ).fetchone()[0]
    assert ahead == 0
    conn.close()


def test_replays_replay_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, folder = tmp_path / "r.sqlite", tmp_path / "replays"
    code, _, err = run_cli(
        capsys,
        "tournament",
        "greedy",
        "random",
        "random",
        "-n",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(db),
        "--replays",
        str(folder),
    )
    assert code == 0, err
    files = sorted(p.name for p in folder.iterdir())
    assert files == [".arena-replays.json"] + [f"3p-t0-d0-r{r}.jsonl" for r in range(3)]
    conn = sqlite3.connect(db)
    seed, rounds = conn.execute("SELECT seed, rounds FROM games WHERE game_key = '3p-t0-d0-r1'").fetchone()
    seats = [
        b
        for (b,) in conn.execute(
            "SELECT b.label FROM results r JOIN bots b USING (bot) JOIN games g "
            "ON g.id = r.game_id WHERE g.game_key = '3p-t0-d0-r1' ORDER BY seat"
        )
    ]
    conn.close()
    lines = [json.loads(x) for x in (folder / "3p-t0-d0-r1.jsonl").read_text().splitlines()]
    assert lines[0]["event"] == "game" and lines[0]["game"] == "3p-t0-d0-r1" and lines[0]["seed"] == seed
    assert [p["bot"] for p in lines[0]["players"]] == seats
    assert lines[-1]["event"] == "end" and lines[-1]["rounds"] == rounds
    code, out, _ = run_cli(capsys, "replay", str(folder / "3p-t0-d0-r1.jsonl"))
    assert code == 0 and f"game 3p-t0-d0-r1  seed {seed}" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tournament", "greedy"], "at least 2 bots"),
        (["tournament", "greedy", "random", "--players", "3"], "a table of 3 needs at least 3 bots"),
        (["tournament", "greedy", "random", "--variant", "teams", "-k", "2"], "teams variant: 4 or 6 players"),
        (["tournament", "greedy", "--variant", "teams"], "at least 2 teams; 1 given"),
        (["tournament", "greedy", "random", "--ray-address", "x:1"], "--ray-address goes with --backend ray"),
        (["tournament", "greedy", "nosuchbot"], "no bot named 'nosuchbot'"),
        (["standings", "--db", "/nonexistent/t.sqlite"], "no such file"),
    ],
)
def test_bad_input_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "tournament.sqlite").exists()


def test_bad_players_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["tournament", "greedy", "random", "--players", "7"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "2 to 6 players sit at a table, not 7" in err and err.count("\n") == 1


@pytest.mark.parametrize("content", [b"not a database at all\n", b"SQLite format 3\x00" + b"\xff" * 100])
def test_corrupt_database_clean_error(content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "bad.sqlite"
    db.write_bytes(content)
    for argv in (["tournament", "greedy", "random", "-q", "--db", str(db)], ["standings", "--db", str(db)]):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and err.startswith(f"arena: error: {db}: not") and err.count("\n") == 1, err
    assert db.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["bad.sqlite"]


def test_bot_files_run_in_the_sandbox(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --trusted a bot file runs sandboxed, or the run is refused when there is no sandbox."""
    (plain,) = write_bots(tmp_path, plain=PLAIN)
    db = tmp_path / "s.sqlite"
    code, out, err = run_cli(
        capsys, "tournament", str(plain), "greedy", "-n", "1", "-q", "--workers", "1", "--db", str(db), "--json"
    )
    try:
        from arena.sandbox import sandboxed_factory  # noqa: F401
    except ImportError:
        assert code == 2 and "lacks" in err and "--trusted" in err and not db.exists()
    else:
        assert code == 0, err
        doc = json.loads(out)
        assert doc["settings"]["trusted"] is False and doc["games"] == 2


@pytest.mark.long
def test_ray_backend_same_results_as_local(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ray_session: None
) -> None:
    pytest.importorskip("arena.sandbox")
    # one bot file: its games are played in streams (one game process a stream) inside Ray's tasks too
    counter = str(Path(__file__).parents[2] / "examples" / "counter.py")
    args = ["greedy", counter, "greedy", "random", "random", "--games", "3", "--seed", "9", "-q", "--json"]
    code, out, err = run_cli(capsys, "tournament", *args, "--workers", "1", "--db", str(tmp_path / "local.sqlite"))
    assert code == 0, err
    local = json.loads(out)
    code, out, err = run_cli(
        capsys, "tournament", *args, "--workers", "2", "--backend", "ray", "--db", str(tmp_path / "ray.sqlite")
    )
    assert code == 0, err
    remote = json.loads(out)
    assert local.pop("db") != remote.pop("db")
    assert remote == local and remote["games"] == 5 * 3 * 4
    # the same rows, game for game
    rows = []
    for name in ("local", "ray"):
        conn = sqlite3.connect(tmp_path / f"{name}.sqlite")
        rows.append(
            conn.execute(
                "SELECT g.game_key, g.seed, r.seat, r.bot, r.place, r.score FROM games g "
                "JOIN results r ON r.game_id = g.id ORDER BY g.game_key, r.seat"
            ).fetchall()
        )
        conn.close()
    assert rows[0] == rows[1] and len(rows[0]) == 60 * 4


def _pool_job(deals: int) -> tuple[Any, list[Any]]:
    from arena.game.rules import CONTEST
    from arena.tournament.runner import plan

    p = plan(["greedy", "random", "random"], sizes=None, deals=deals, seed=0, rules=CONTEST)
    return p.job(), list(p.schedule.keys())


def test_pool_replaces_a_killed_worker_and_loses_no_game() -> None:
    import multiprocessing

    from arena.tournament.backends.local import in_pool

    job, keys = _pool_job(deals=100)
    seen = []
    killed = False
    for batch in in_pool(job, keys, 2, lambda: False):
        seen += [r.key for r in batch]
        if not killed:
            victim = multiprocessing.active_children()[0]
            os.kill(victim.pid, signal.SIGKILL)
            killed = True
    victim.join()
    assert victim.exitcode == -signal.SIGKILL and len(seen) >= len(keys)
    assert sorted(set(seen)) == keys  # every game came back (some possibly twice: the DB ignores repeats)


def test_pool_reports_a_harness_error() -> None:
    from arena.tournament.backends.local import HarnessError, in_pool
    from arena.tournament.plan.schedule import GameKey

    job, keys = _pool_job(deals=1)
    with pytest.raises(HarnessError, match="game 5p-t0-d0-r0: KeyError"):
        for _ in in_pool(job, keys + [GameKey(5, 0, 0, 0)], 2, lambda: False):
            pass


def test_second_writer_and_bad_replays_folder_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.game.rules import CONTEST
    from arena.tournament.db.database import TournamentDB
    from arena.tournament.runner import plan

    db = tmp_path / "busy.sqlite"
    p = plan(["greedy", "random"], sizes=None, deals=1, seed=0, rules=CONTEST)
    holder = TournamentDB.open(db, p.settings, [e.row(i) for i, e in enumerate(p.entrants)], p.schedule)
    try:
        code, _, err = run_cli(capsys, "tournament", "greedy", "random", "-n", "1", "-q", "--db", str(db))
        assert code == 2 and "another arena tournament is writing to it" in err and err.count("\n") == 1
    finally:
        holder.close()
    assert run_cli(capsys, "tournament", "greedy", "random", "-n", "1", "-q", "--db", str(db))[0] == 0
    (tmp_path / "afile").write_text("x")
    code, _, err = run_cli(
        capsys,
        "tournament",
        "greedy",
        "random",
        "-n",
        "1",
        "-q",
        "--db",
        str(tmp_path / "new.sqlite"),
        "--replays",
        str(tmp_path / "afile" / "replays"),
    )
    assert code == 2 and "cannot make the replays folder" in err and not (tmp_path / "new.sqlite").exists()


def test_a_stop_within_a_stream_drops_the_stream_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """--workers 1: Ctrl-C between two games of a stream ends the run at once, and only whole
    streams come back (a resume re-runs the dropped one from its start)."""
    from arena.tournament.backends.games import GameRunner
    from arena.tournament.backends.local import in_process
    from arena.tournament.plan.schedule import stream_of

    job, keys = _pool_job(deals=5)
    played: list[Any] = []
    real = GameRunner._play

    def counting(self: GameRunner, key: Any, kept: Any) -> Any:
        played.append(key)
        return real(self, key, kept)

    monkeypatch.setattr(GameRunner, "_play", counting)
    back = [r.key for batch in in_process(job, keys, lambda: len(played) >= 8) for r in batch]
    assert len(played) == 8 and len(back) == 5  # the first stream (5 deals), not the 3 games of the second
    assert {stream_of(k) for k in back} == {stream_of(back[0])} and sorted(back) == sorted(played[:5])
