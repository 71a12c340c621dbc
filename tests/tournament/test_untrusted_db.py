"""A tournament database is untrusted input (issue 17): trust comes from the command line, never
from the database, and every row is type-checked on the way in.

The attacks: a crafted database that says its bots are trusted and registered, with a source
that writes a marker file when run unsandboxed; a source edited without its sha256; and a
seeded mutation fuzz of every cell, row and setting of a real tournament's database.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_here as run

from arena.seats.loader import registry
from arena.tournament.db.read import open_readonly
from arena.tournament.rerun import load_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KEY = "3p-t0-d0-r1"


def one_line_error(code: int, err: str) -> bool:
    return code != 0 and err.startswith("arena: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real tournament: two registered bots and a bot file, every game kept with --replays."""
    folder = tmp_path_factory.mktemp("honest")
    bot = folder / "counter.py"
    shutil.copy(EXAMPLES / "counter.py", bot)
    db = folder / "t.sqlite"
    code, _, err = run(
        "tournament", "greedy", "random", str(bot), "-k", "3", "--games", "2", "--seed", "5",
        "--db", str(db), "--replays", str(folder / "reps"), "-q", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    return db


def set_source(db: Path, label: str, source: bytes, *, sha: str | None = None, **row: Any) -> None:
    """Give bot ``label`` the stored ``source`` (and its sha256 unless ``sha`` says otherwise)."""
    sha = sha or hashlib.sha256(source).hexdigest()
    conn = sqlite3.connect(db)
    with conn:
        (old,) = conn.execute("SELECT sha256 FROM bots WHERE label = ?", (label,)).fetchone()
        conn.execute("DELETE FROM sources WHERE sha256 = ?", (old,))
        conn.execute("INSERT INTO sources VALUES (?, ?)", (sha, source))
        conn.execute("UPDATE bots SET sha256 = ? WHERE label = ?", (sha, label))
        for column, value in row.items():
            conn.execute(f"UPDATE bots SET {column} = ? WHERE label = ?", (value, label))
        (settings,) = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps({**json.loads(settings), "trusted": True}),)
        )
    conn.close()


def marker_source(marker: Path) -> bytes:
    """A bot that works, and writes ``marker`` as soon as it runs outside the sandbox (in-process,
    ``print.__self__`` is the ``builtins`` module; the code policy refuses the ``_`` name)."""
    greedy = Path(registry()["greedy"]).read_text(encoding="utf-8")
    return f"print.__self__.open({str(marker)!r}, 'w').write('ran unsandboxed')\n{greedy}".encode()


@pytest.fixture
def crafted(honest: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The honest database with greedy's source replaced by the marker writer: its sha256
    updated to match, origin 'registry', and the settings saying trusted."""
    db = tmp_path / "crafted.sqlite"
    shutil.copy(honest, db)
    marker = tmp_path / "MARKER"
    set_source(db, "greedy", marker_source(marker), origin="registry", path=None)
    return db, marker


def test_a_crafted_database_never_runs_code_unsandboxed(crafted: tuple[Path, Path], tmp_path: Path) -> None:
    db, marker = crafted
    for argv in (
        ["replay", "--db", str(db), "--game", KEY],
        ["view", "--db", str(db), "--game", KEY, "--out", str(tmp_path / "v.html")],
        ["report", "--db", str(db), "--out", str(tmp_path / "site"), "-q"],
    ):
        code, _, err = run(*argv)
        assert "Traceback" not in err
        assert not marker.exists(), f"{argv[0]} ran the database's code unsandboxed"
    # The same source with --trusted on the command line does run in-process: the test can fail.
    run("replay", "--db", str(db), "--game", KEY, "--trusted")
    assert marker.exists()


def test_registered_only_when_the_installed_registry_has_these_very_bytes(
    honest: Path, crafted: tuple[Path, Path]
) -> None:
    def entrants(db: Path, trusted: bool = False) -> dict[str, tuple[bool, str]]:
        conn, meta = open_readonly(db)
        try:
            plan = load_plan(conn, meta, trusted=trusted)
        finally:
            conn.close()
        return {e.label: (e.trusted, e.src.origin) for e in plan.entrants}

    # Honest: the registry's own bots run in-process, the bot file sandboxed.
    assert entrants(honest) == {
        "greedy": (True, "registry"),
        "random": (True, "registry"),
        "counter": (False, "file"),
    }
    # Edited greedy (its sha256 updated, settings saying trusted): a sandboxed file bot.
    db, _ = crafted
    assert entrants(db)["greedy"] == (False, "file")
    assert entrants(db)["counter"] == (False, "file")
    assert entrants(db, trusted=True)["greedy"] == (True, "file")


def test_a_source_that_does_not_match_its_sha256_is_refused_before_anything_runs(honest: Path, tmp_path: Path) -> None:
    db = tmp_path / "edited.sqlite"
    shutil.copy(honest, db)
    marker = tmp_path / "MARKER"
    conn = sqlite3.connect(db)
    (sha,) = conn.execute("SELECT sha256 FROM bots WHERE label = 'counter'").fetchone()
    conn.close()
    set_source(db, "counter", marker_source(marker), sha=sha)  # the old sha256, new bytes
    before = sorted(p.name for p in tmp_path.iterdir())
    message = "the database's source of counter does not match its sha256: refusing to run it"
    for argv in (
        ["replay", "--db", str(db), "--game", KEY, "--trusted"],
        ["view", "--db", str(db), "--game", KEY, "--out", str(tmp_path / "v.html"), "--trusted"],
        ["report", "--db", str(db), "--out", str(tmp_path / "site"), "-q", "--trusted"],
        ["report", "--db", str(db), "--out", str(tmp_path / "site"), "-q", "--replays", str(honest.parent / "reps")],
    ):
        code, out, err = run(*argv)
        assert one_line_error(code, err) and message in err, (argv, err)
        assert out == ""
        assert not marker.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # no output file or folder


def test_trusted_on_the_command_line_still_replays_an_honest_database(honest: Path, tmp_path: Path) -> None:
    for extra in ([], ["--trusted"]):
        code, out, err = run("replay", "--db", str(honest), "--game", KEY, *extra)
        assert code == 0 and out.startswith(f"game {KEY}"), err
    code, _, err = run("report", "--db", str(honest), "--out", str(tmp_path / "site"), "-q", "--trusted")
    assert code == 0 and "re-played otherwise" not in err, err
    assert (tmp_path / "site" / "games" / f"{KEY}.js").is_file()


def test_trusted_goes_with_a_database_only(tmp_path: Path) -> None:
    record = tmp_path / "g.jsonl"
    assert run("play", "greedy", "random", "--games", "1", "--seed", "3", "--replay", str(record), "-q")[0] == 0
    for argv in (["replay", str(record), "--trusted"], ["view", str(record), "--allow-weak-sandbox"]):
        code, _, err = run(*argv)
        assert one_line_error(code, err) and "go with --db" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl"]


def test_a_stored_path_is_never_opened(honest: Path, tmp_path: Path) -> None:
    """A path in the bots table is display text only: the report once read a manifest beside
    it (a FIFO there would hang it; a file there put its author in the pages)."""
    (tmp_path / "elsewhere.json").write_text(json.dumps({"author": "READ-FROM-A-STORED-PATH"}))
    db = tmp_path / "p.sqlite"
    shutil.copy(honest, db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE bots SET path = ? WHERE label = 'counter'", (str(tmp_path / "elsewhere.py"),))
    conn.close()
    code, _, err = run("report", "--db", str(db), "--out", str(tmp_path / "site"), "-q")
    assert code == 0, err
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html")]
    assert pages and not any("READ-FROM-A-STORED-PATH" in page for page in pages)


def test_a_weak_sandbox_is_refused_for_re_plays_as_for_tournaments(
    honest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.sandbox.python import factory as pool

    real = pool.sandbox_layers

    def weak(limits: Any = None) -> dict[str, str]:
        return {**real(limits), "seccomp": "unavailable: pyseccomp not installed"}

    monkeypatch.setattr(pool, "sandbox_layers", weak)
    site = tmp_path / "site"
    for argv in (["replay", "--db", str(honest), "--game", KEY], ["report", "--db", str(honest), "--out", str(site)]):
        code, out, err = run(*argv)
        assert one_line_error(code, err) and "lacks seccomp" in err and "--allow-weak-sandbox" in err, err
        assert out == "" and not site.exists()
        code, out, err = run(*argv, "--allow-weak-sandbox", "-q" if argv[0] == "report" else "--seat=0")
        assert code == 0 and "sandbox without seccomp" in err, err
    # Bots all trusted on the command line need no sandbox.
    code, _, err = run("replay", "--db", str(honest), "--game", KEY, "--trusted")
    assert code == 0 and err == "", err


def edit_settings(src: Path, dst: Path, **changes: Any) -> Path:
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
    with conn:
        (text,) = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps({**json.loads(text), **changes}),))
    conn.close()
    return dst


def test_settings_are_checked_and_unknown_ones_neither_obeyed_nor_shown(honest: Path, tmp_path: Path) -> None:
    db = edit_settings(honest, tmp_path / "a.sqlite", games=10**12)  # a schedule of 3 * 10^12 games
    code, _, err = run("standings", str(db))
    assert one_line_error(code, err) and "table meta: settings: games 1000000000000 is not" in err, err
    db = edit_settings(honest, tmp_path / "b.sqlite", move_seconds=float("nan"))
    code, _, err = run("replay", "--db", str(db), "--game", KEY)
    assert one_line_error(code, err) and "move_seconds nan" in err, err
    db = edit_settings(honest, tmp_path / "c.sqlite", **{"\x1b]52;c;cm0gLXJm\x07": "\x1b[2J", "owner": "<b>x</b>"})
    code, out, err = run("standings", str(db), "--format", "json")
    assert code == 0 and "52;c" not in out and "owner" not in out and "\\u001b" not in out, err


# -- the mutation fuzz ---------------------------------------------------------

HOSTILE: list[Any] = [
    "x", "", 1.5, -1, 0, 10**12, 2**63 - 1, -(2**63), None, b"\xff\xfe\x00", "NaN", "1e999",
    "\x1b[31mred\x1b[0m", "<script>alert(1)</script>", "=cmd|' /C calc'!A0", "a" * 5000,
    "[", "{}", "[]", "[[" * 5000, "1" + "0" * 5000, '"\\ud800"', "[0, 0, 0]", "[0, 1, 99]", "[-1, 0, 1]",
]  # fmt: skip
SETTING_VALUES: list[Any] = [
    None, "3", -1, 0, 10**12, 10**400, 1e308, float("nan"), [], {}, [7], [3, 3], [2, 3], True,
    {"limit": -5}, {"hand_size": 9}, {"points": []}, {"points": {"z": 1}}, {"name": "\u202e"},
    {"method": "x", "confidence": 2, "first_deals": 10**9}, {"3": "knockout"},
]  # fmt: skip
SETTING_KEYS = ["seed", "sizes", "games", "rules", "schedule", "trusted", "move_seconds", "game_seconds", "adaptive"]
TABLES = ["meta", "bots", "tables", "games", "results", "faults", "seat_times", "sources"]


def loosen(db: Path) -> None:
    """Drop every constraint (keys, NOT NULL, UNIQUE): a crafted file need not have them."""
    conn = sqlite3.connect(db)
    for table in TABLES:
        conn.executescript(
            f"CREATE TABLE loose AS SELECT * FROM {table}; DROP TABLE {table}; ALTER TABLE loose RENAME TO {table};"
        )
    conn.commit()
    conn.close()


def mutate(db: Path, rng: random.Random) -> str:
    """One seeded mutation of ``db``; says which."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA synchronous = OFF")
    try:
        what = rng.choice(["cell"] * 6 + ["setting"] * 3 + ["delete", "duplicate", "count", "view", "invalid-utf8"])
        table = rng.choice(TABLES)
        if conn.execute("SELECT type FROM sqlite_master WHERE name = ?", (table,)).fetchone() != ("table",):
            return "nothing"  # a view made by an earlier mutation: reading it would never end
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        rowids = [r for (r,) in conn.execute(f"SELECT rowid FROM {table}")]
        if what == "setting":
            (text,) = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
            settings = json.loads(text)
            key = rng.choice(SETTING_KEYS)
            settings[key] = rng.choice(SETTING_VALUES)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
            conn.commit()
            return f"settings.{key} = {settings[key]!r:.40}"
        if not rowids:
            return "nothing"
        rowid = rng.choice(rowids)
        column = rng.choice(columns)
        if what == "cell":
            value = rng.choice(HOSTILE)
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, rowid))
        elif what == "invalid-utf8":
            conn.execute(f"UPDATE {table} SET {column} = CAST(X'61ff80ed' AS TEXT) WHERE rowid = ?", (rowid,))
        elif what == "delete":
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        elif what == "duplicate":
            conn.execute(f"INSERT INTO {table} SELECT * FROM {table} WHERE rowid = ?", (rowid,))
        elif what == "count":
            ints = [c for c in columns if c in ("rounds", "moves", "faults", "seat", "deal", "tbl", "bot", "place")]
            column = rng.choice(ints or columns)
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (10**12, rowid))
        elif what == "view":  # a table replaced by a view that never ends
            cols = ", ".join(f"x AS {c}" for c in columns)
            conn.executescript(
                f"DROP TABLE {table}; CREATE VIEW {table} AS WITH RECURSIVE c(x) AS "
                f"(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT {cols} FROM c;"
            )
        conn.commit()
        return f"{what} {table}.{column} row {rowid}"
    finally:
        conn.close()


def test_mutated_databases_give_results_or_one_line(honest: Path, tmp_path: Path) -> None:
    """150 seeded mutations: ``standings`` on each, ``report`` on every tenth (with the kept
    records, and re-playing on every fiftieth): exit 0, or one error line and a non-zero exit;
    never a traceback, and a failed report leaves no folder."""
    base = tmp_path / "base.sqlite"
    shutil.copy(honest, base)
    loosen(base)
    code, _, err = run("standings", str(base))
    assert code == 0, err  # the loosened copy still reads
    rng = random.Random(1717)
    refused = 0
    for case in range(150):
        db = tmp_path / f"m{case}.sqlite"
        shutil.copy(base, db)
        what = [mutate(db, rng) for _ in range(rng.choice([1, 1, 2]))]
        code, _, err = run("standings", str(db), "--format", rng.choice(["table", "json", "csv", "markdown"]))
        assert code == 0 or one_line_error(code, err), (case, what, err)
        refused += code != 0
        if case % 10 == 0:
            out = tmp_path / f"site{case}"
            replays = [] if case % 50 == 0 else ["--replays", str(honest.parent / "reps")]
            code, _, err = run("report", "--db", str(db), "--out", str(out), "-q", *replays)
            assert code == 0 or one_line_error(code, err), (case, what, err)
            assert out.is_dir() == (code == 0), (case, what)
        db.unlink()
    assert 30 < refused < 150  # the mutations reach both outcomes
