"""The sandbox's limits and layers on the command line: --move-time/--game-time (CPU seconds) for
play, check and tournament; a tournament stores them, refuses a resume with other ones, prints and
records the hardening layers and refuses a weak sandbox unless told; --workers past the CPUs warns."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main

ROOT = Path(__file__).resolve().parents[2]

#: Spends about 0.1-0.3 s of CPU on its first move of each game (a plain loop: its guards are
#: taken back at load time), then plays like greedy.
SLOW_START = '''"""Thinks hard once per game."""


class Bot:
    def __init__(self):
        self.moves = 0

    def move(self, turn):
        self.moves += 1
        if self.moves == 1:
            total = 0
            for i in range(2000000):
                total += i
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0], "h" if options[0].rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


@pytest.fixture
def slow_bot(tmp_path: Path) -> Path:
    path = tmp_path / "slow_start.py"
    path.write_text(SLOW_START)
    return path


def faults_of(out: str) -> dict[str, int]:
    return {row["bot"]: row["faults"] for row in json.loads(out)["standings"]}


def test_play_move_time_is_cpu_seconds_per_move(slow_bot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roomy = ["--move-time", "20", "--game-time", "60"]  # clean even on a loaded machine
    assert main(["play", str(slow_bot), "greedy", "--games", "1", "--json", "--quiet", *roomy]) == 0
    assert faults_of(capsys.readouterr().out)["slow_start"] == 0
    assert main(["play", str(slow_bot), "greedy", "--games", "1", "--json", "--quiet", "--move-time", "0.02"]) == 0
    assert faults_of(capsys.readouterr().out)["slow_start"] >= 1  # the timeout (and the retirement)


def test_play_game_time_is_the_cpu_bank_of_a_game(slow_bot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "play",
                str(slow_bot),
                "greedy",
                "--games",
                "1",
                "--json",
                "--quiet",
                "--move-time",
                "0.02",
                "--game-time",
                "0.02",
            ]
        )
        == 0
    )
    assert faults_of(capsys.readouterr().out)["slow_start"] >= 1


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own errors
        return int(exc.code or 0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--move-time", "0"], "above 0"),
        (["--move-time", "fast"], "number of seconds"),
        (["--game-time", "-3"], "above 0"),
        (["--game-time", "nan"], "above 0"),
        (["--move-time", "5", "--game-time", "2"], "more than the game"),
    ],
)
def test_bad_limits_are_one_line_errors(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.sqlite"
    for command in (
        ["play", "greedy", "random"],
        ["check", str(ROOT / "bots" / "greedy.py")],
        ["tournament", "greedy", "random", "--db", str(db)],
    ):
        assert exit_code(command + args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert not db.exists()


def test_check_counts_cpu_time_against_its_move_time(slow_bot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # generous enough for a loaded machine: the subject is the refusal below, not this speed
    assert main(["check", str(slow_bot), "--games", "1", "--move-time", "20", "--game-time", "60"]) == 0
    out = capsys.readouterr().out
    assert "(CPU time)" in out and "clean" in out
    assert main(["check", str(slow_bot), "--games", "1", "--move-time", "0.02"]) == 1
    assert "timeout" in capsys.readouterr().out


def run_tournament(db: Path, *extra: str) -> int:
    return main(
        [
            "tournament",
            str(ROOT / "bots" / "greedy.py"),
            "random",
            "greedy",
            "--players",
            "2",
            "--games",
            "1",
            "--quiet",
            "--db",
            str(db),
            *extra,
        ]
    )


def meta(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def test_tournament_stores_the_limits_and_refuses_to_resume_with_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.sqlite"
    assert run_tournament(db, "--move-time", "2", "--game-time", "40") == 0
    settings = json.loads(meta(db)["settings"])
    assert settings["move_seconds"] == 2.0 and settings["game_seconds"] == 40.0
    capsys.readouterr()
    before = db.read_bytes()
    assert run_tournament(db, "--move-time", "1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "move_seconds" in err and "other settings" in err
    assert run_tournament(db, "--move-time", "2", "--game-time", "40") == 0  # the same limits resume
    assert json.loads(meta(db)["settings"]) == settings
    assert before  # nothing was lost on the refused run: the resume above found every game


def test_a_database_from_before_the_limits_resumes_under_the_old_defaults(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    assert run_tournament(db) == 0
    settings = json.loads(meta(db)["settings"])
    del settings["move_seconds"], settings["game_seconds"]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    assert run_tournament(db) == 0
    assert run_tournament(db, "--move-time", "3") == 2


def test_a_database_that_names_the_limits_move_time_resumes_and_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Databases made before the rename store ``move_time``/``game_time``: read through the
    mapping, they resume, refuse other limits, and report the limits under the one name."""
    db = tmp_path / "old.sqlite"
    assert run_tournament(db, "--move-time", "2", "--game-time", "40") == 0
    settings = json.loads(meta(db)["settings"])
    old = {
        ("move_time" if k == "move_seconds" else "game_time" if k == "game_seconds" else k): v
        for k, v in settings.items()
    }
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(old),))
    capsys.readouterr()
    assert run_tournament(db, "--move-time", "2", "--game-time", "40") == 0
    assert run_tournament(db, "--move-time", "3", "--game-time", "40") == 2
    assert "move_seconds was 2.0, now 3.0" in capsys.readouterr().err
    assert main(["standings", str(db), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["settings"]
    assert shown["move_seconds"] == 2.0 and shown["game_seconds"] == 40.0 and "move_time" not in shown
    # the attack: both names, so that one reader obeys one and another the other
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps({**old, "move_seconds": 9.0}),))
    assert main(["standings", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "both move_time and move_seconds" in err, err


def test_tournament_prints_and_records_the_layers_in_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.sqlite"
    assert (
        main(
            [
                "tournament",
                str(ROOT / "bots" / "greedy.py"),
                "random",
                "--players",
                "2",
                "--games",
                "1",
                "--db",
                str(db),
                "--no-h2h",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("sandbox: "))
    sandbox = json.loads(meta(db)["sandbox"])
    layers = sandbox["layers"]
    assert {
        "workdir",
        "rlimits",
        "netns",
        "uid",
        "no_new_privs",
        "seccomp",
        "cpu_time",
        "freeze",
        "fresh_process",
    } == set(layers)
    active = [k for k, v in layers.items() if v == "active"]
    assert line.startswith(f"sandbox: {len(active)}/{len(layers)} layers active")
    assert sandbox["missing"] == [k for k in layers if k not in active]


def test_tournament_of_trusted_bots_needs_no_sandbox(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.sqlite"
    assert main(["tournament", "greedy", "random", "--players", "2", "--games", "1", "--db", str(db)]) == 0
    assert "sandbox: " not in capsys.readouterr().err and "sandbox" not in meta(db)


def test_a_weak_sandbox_is_refused_in_one_line_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.sandbox.python import factory as pool

    real = pool.sandbox_layers

    def weak(limits: Any = None) -> dict[str, str]:
        layers = real(limits)
        layers["seccomp"] = "unavailable: pyseccomp not installed"
        layers["uid"] = "unavailable: not running as root (euid 1000)"
        return layers

    monkeypatch.setattr(pool, "sandbox_layers", weak)
    db = tmp_path / "t.sqlite"
    assert run_tournament(db) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "uid, seccomp" in err and "--allow-weak-sandbox" in err
    assert not db.exists()  # refused before any database is made
    assert run_tournament(db, "--allow-weak-sandbox") == 0
    sandbox = json.loads(meta(db)["sandbox"])
    assert sandbox["missing"] == ["uid", "seccomp"] and sandbox["allowed_weak"] is True


def test_more_workers_than_cpus_is_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.sandbox.limits import usable_cpus

    many = usable_cpus() + 1
    assert (
        main(
            [
                "tournament",
                "greedy",
                "random",
                "--players",
                "2",
                "--games",
                "1",
                "--quiet",
                "--db",
                str(tmp_path / "t.sqlite"),
                "--workers",
                str(many),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert f"warning: --workers {many} is more than the {usable_cpus()} CPUs" in err
