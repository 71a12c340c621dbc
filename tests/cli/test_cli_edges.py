"""The CLI's rough edges of issue 18, each with the attack or the user's step that showed it:
standings read while a tournament writes, an internal error's one line (ARENA_DEBUG for the
traceback), a resubmission that keeps its author, a refused run that creates nothing, a
database on read-only media, the fault summary, the SPRT bar's LLR, standings that fit 100
columns, and ``rules --list --json``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import run

import arena.tournament.db.rows as dbrows

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 2-player tournament of 4 games (trusted reference bots)."""
    from arena.cli import main

    path = tmp_path_factory.mktemp("edges") / "t.sqlite"
    code = main(["tournament", "greedy", "random", "-k", "2", "-n", "2", "--seed", "5", "--db", str(path), "-q"])
    assert code == 0
    return path


def test_standings_read_one_snapshot_while_the_tournament_commits(
    small_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race behind "damaged tournament database (KeyError: 332)": the reader had read table
    # games when the writer committed the next game; its results then named a game it had not read.
    db = tmp_path / "t.sqlite"
    db.write_bytes(small_db.read_bytes())
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")  # as the tournament writes; its -wal file stays
    (gid,) = writer.execute("SELECT MAX(id) FROM games").fetchone()
    game = writer.execute("SELECT * FROM games WHERE id = ?", (gid,)).fetchone()
    results = writer.execute("SELECT * FROM results WHERE game_id = ?", (gid,)).fetchall()
    writer.execute("DELETE FROM faults WHERE game_id = ?", (gid,))
    writer.execute("DELETE FROM results WHERE game_id = ?", (gid,))
    writer.execute("DELETE FROM games WHERE id = ?", (gid,))
    real = dbrows.fetch
    committed = []

    def racing(conn: sqlite3.Connection, table: str, sql: str, *args: Any, **kw: Any) -> list[Any]:
        rows = real(conn, table, sql, *args, **kw)
        if table == "games" and not committed:  # the writer commits a game between two reads
            writer.execute("BEGIN IMMEDIATE")
            writer.execute(f"INSERT INTO games VALUES ({', '.join('?' * len(game))})", game)
            for r in results:
                writer.execute(f"INSERT INTO results VALUES ({', '.join('?' * len(r))})", r)
            writer.execute("COMMIT")
            committed.append(True)
        return rows

    monkeypatch.setattr(dbrows, "fetch", racing)
    try:
        code, out, err = run(capsys, "standings", str(db))
    finally:
        writer.close()
    assert committed
    assert code == 0, err
    assert "(partial: 3 of 4 games played)" in out  # the snapshot from before the commit
    code, out, err = run(capsys, "standings", str(db))
    assert code == 0 and "partial" not in out  # and the next read sees the new game


BUGGY = (
    "import arena.game.explain as t\n"
    "def broken(rules):\n"
    "    return 1 / 0\n"
    "t.describe_rules = broken\n"
    "from arena.cli import main\n"
    "raise SystemExit(main(['rules']))\n"
)


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_is_one_line_unless_arena_debug(debug: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DEBUG"}
    if debug:
        env["ARENA_DEBUG"] = "1"
    proc = subprocess.run([sys.executable, "-c", BUGGY], capture_output=True, text=True, timeout=60, env=env)
    if debug:
        assert proc.returncode == 1 and "Traceback (most recent call last)" in proc.stderr
        assert "ZeroDivisionError: division by zero" in proc.stderr and "in broken" in proc.stderr
    else:
        assert proc.returncode == 70
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert lines[0].startswith("arena: internal error: ZeroDivisionError: division by zero")
        assert "ARENA_DEBUG=1" in lines[0]


def test_arena_debug_shows_where_a_usage_error_came_from(tmp_path: Path) -> None:
    env = dict(os.environ, ARENA_DEBUG="1")
    missing = str(tmp_path / "nope.jsonl")
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "replay", missing], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 2 and "Traceback" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("arena: error: ")


def on_read_only_media(tmp_path: Path, setup: str, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (a shell line; $MEDIA is the media) after ``setup`` filled the media,
    which are then read-only: a chmod'ed folder (not root) or a read-only tmpfs (root)."""
    from support.cli import read_only_runner

    how = read_only_runner()
    if how is None:
        pytest.skip("neither a non-root user (chmod) nor mount namespaces (root) to make read-only media")
    media = tmp_path / "media"
    media.mkdir()
    env = dict(os.environ, MEDIA=str(media), ARENA=f"{sys.executable} -m arena")
    if how == "chmod":
        script = f"{setup} && chmod -R a-w $MEDIA && {command}; s=$?; chmod -R u+w $MEDIA; exit $s"
    else:
        script = f"mount -t tmpfs none $MEDIA && {setup} && mount -o remount,ro $MEDIA && {command}"
        script = f"unshare -m sh -c '{script}'"
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


def test_a_run_refused_for_its_replays_folder_creates_no_database(tmp_path: Path) -> None:
    # --replays on read-only media: refused before the database is made, not after.
    proc = on_read_only_media(
        tmp_path,
        "true",
        "$ARENA tournament greedy random -k 2 -n 1 --seed 3 -q --db db.sqlite --replays $MEDIA/reps",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("cannot make the replays folder: read-only file system") or (
        "permission denied" in proc.stderr
    )
    assert len(proc.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["media"]  # no db.sqlite, no -wal, no -shm


def test_a_tournament_on_read_only_media_says_so(small_db: Path, tmp_path: Path) -> None:
    # It was "not a tournament database (unable to open database file)".
    proc = on_read_only_media(
        tmp_path,
        f"cp {small_db} $MEDIA/t.sqlite",
        "$ARENA tournament greedy random -k 2 -n 2 --seed 5 -q --db $MEDIA/t.sqlite; echo $? >&2; ls -A $MEDIA >&2",
    )
    *message, status, listing = proc.stderr.strip().splitlines()
    assert status == "2" and listing == "t.sqlite"
    assert len(message) == 1 and "not a tournament database" not in message[0]
    assert "cannot write to it (" in message[0] and "copy the database to a writable folder" in message[0]


LONG_BOT = '''"""A bot with a long name."""


class Bot:
    name = "{name}"

    def move(self, turn):
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


def test_terminal_standings_fit_100_columns_and_csv_json_keep_every_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["a" * 40, "b" * 39 + "x", "c" * 38 + "yz"]
    for name in names:
        (tmp_path / f"{name}.py").write_text(LONG_BOT.format(name=name))
    db = str(tmp_path / "t.sqlite")
    bots = [str(tmp_path / f"{n}.py") for n in names]
    code, _, err = run(
        capsys, "tournament", *bots, "greedy", "-k", "4", "-n", "1", "--seed", "2", "--db", db, "-q", "--trusted"
    )
    assert code == 0, err
    for h2h in ("--h2h", "--no-h2h"):
        code, out, _ = run(capsys, "standings", db, h2h)
        assert code == 0
        table = out.split("\n\n")[0].splitlines()[1:-1]  # the overall table, under its title, above its note
        assert max(len(line) for line in table) <= 100, "\n".join(table)
        assert all(name in "\n".join(table) for name in [*names, "greedy"])  # names whole: columns give way
    code, out, _ = run(capsys, "standings", db, "--format", "csv")
    header = out.splitlines()[0].split(",")
    assert {"losses", "mu", "sigma", "ordinal", "score_lo", "score_hi"} <= set(header)
    assert any(names[0] in line for line in out.splitlines())  # the whole name
    code, out, _ = run(capsys, "standings", db, "--json")
    row = json.loads(out)["overall"]["standings"][0]
    assert {"losses", "mu", "sigma", "ordinal"} <= set(row)


def test_rules_list_json_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--list", "--json")
    variants = json.loads(out)
    assert code == 0 and variants["contest"] == {} and variants["teams"] == {"teams": True}
    code, text, _ = run(capsys, "rules", "--list")
    assert sorted(line.split()[0] for line in text.splitlines()) == sorted(variants)


RAISES = """class Bot:
    name = "raises"

    def move(self, turn):
        return 1 / 0
"""


@pytest.mark.parametrize("trusted", [True, False])
def test_play_names_each_faulting_bots_first_fault(
    trusted: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said only "faults 9" in the table, with no hint of what went wrong.
    bot = tmp_path / "raises.py"
    bot.write_text(RAISES)
    code, out, err = run(capsys, "play", str(bot), "greedy", "-n", "3", "--seed", "1", *(["--trusted"] * trusted))
    assert code == 0
    lines = [line for line in err.splitlines() if "fault" in line]
    assert lines == [
        "arena: raises: 9 faults, first: exception: ZeroDivisionError: division by zero (line 5) in game 1 "
        "(see --verbose)"
    ]
    code, out, err = run(capsys, "play", str(bot), "greedy", "-n", "1", "--seed", "1", "--trusted", "-v")
    assert "first: exception: ZeroDivisionError" in err and "see --verbose" not in err
    code, out, err = run(capsys, "play", "greedy", "random", "-n", "2", "--seed", "1")
    assert "fault" not in err  # a clean match says nothing more


def test_submit_replace_without_author_keeps_the_author(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.authoring.test_submissions import CLEAN

    bot = tmp_path / "swapper.py"
    bot.write_text(CLEAN)
    folder = tmp_path / "subs"
    code, _, err = run(capsys, "submit", str(bot), "--to", str(folder), "--games", "1", "--author", "Ann Lee")
    assert code == 0, err
    bot.write_text(CLEAN.replace("an honest bot", "a better bot"))
    code, out, err = run(capsys, "submit", str(bot), "--to", str(folder), "--games", "1", "--replace")
    assert code == 0, err
    manifest = json.loads((folder / "swapper.json").read_text())
    assert manifest["author"] == "Ann Lee" and "replaces" in manifest and "author Ann Lee" in out
    bot.write_text(CLEAN.replace("an honest bot", "a third bot"))
    code, out, err = run(capsys, "submit", str(bot), "--to", str(folder), "-n", "1", "--replace", "--author", "Bo")
    assert code == 0 and json.loads((folder / "swapper.json").read_text())["author"] == "Bo"  # a new one is taken


def test_the_sprt_progress_bar_shows_the_llr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.cli.output as output

    bars: list[Any] = []
    real = output.progress_bar

    def recording(total: int, **kw: Any) -> Any:
        bar = real(total, **kw)
        bars.append(bar)
        return bar

    monkeypatch.setattr(output, "progress_bar", recording)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, "play", "greedy", "random", "--sprt", "0,200", "-n", "40", "--seed", "3")
    assert code == 0 and len(bars) == 1
    assert bars[0].postfix.startswith("LLR ") and "(-2.94, +2.94)" in bars[0].postfix
    llr = json.loads(run(capsys, "play", "greedy", "random", "--sprt", "0,200", "-n", "40", "--seed", "3", "--json")[1])
    assert bars[0].postfix.startswith(f"LLR {llr['sprt']['llr']:+.2f} ")
