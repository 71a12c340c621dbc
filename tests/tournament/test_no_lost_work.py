"""No lost work: record files and folders are never overwritten unasked, read-only commands
leave nothing behind and read read-only media, a closed stdout and SIGTERM are handled as a
person expects, and bad setups fail in one line before any work or any database."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import one_line_error, read_only_runner, run, run_process
from test_tournament import count_games, wait_for_games

from arena.verify import check_file

BOT = '''"""Plays like greedy, from a file."""
class Bot:
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


def popen(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def games_in(path: Path) -> int:
    try:
        return sum(1 for line in path.read_text().splitlines() if line.startswith('{"event":"game"'))
    except OSError:
        return 0


# -- arena play --replay FILE -------------------------------------------------------------


def test_replay_refuses_an_existing_file_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "old.jsonl"
    record.write_text("a record from yesterday\n")
    argv = ("play", "greedy", "random", "-n", "2", "-q", "--replay", str(record))
    one_line_error(*run(capsys, *argv), str(record), "already exists", "--force")
    assert record.read_text() == "a record from yesterday\n"
    code, _, err = run(capsys, *argv, "--force")
    assert code == 0, err
    assert games_in(record) == 2 and check_file(str(record)) == []


def test_forced_replay_replaces_a_link_or_fifo_never_writes_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --force names the entry, not what a link points at (red team: --replay LINK --force wrote
    # the record into the link's target), and never opens a FIFO (that would wait for ever).
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for path in (link, fifo):
        code, _, err = run(capsys, "play", "greedy", "random", "-n", "1", "-q", "--replay", str(path), "--force")
        assert code == 0, err
        assert path.is_file() and not path.is_symlink() and games_in(path) == 1
    assert victim.read_text() == "keep\n"


def test_a_bot_file_is_never_a_record_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "mine.py"
    bot.write_text(BOT)
    for extra in ((), ("--force",)):
        one_line_error(
            *run(capsys, "play", str(bot), "greedy", "-n", "1", "-q", "--replay", str(bot), *extra), "is the bot file"
        )
    link = tmp_path / "link.jsonl"
    link.symlink_to(bot)
    one_line_error(
        *run(capsys, "play", str(bot), "greedy", "-n", "1", "-q", "--replay", str(link), "--force"), "is the bot file"
    )
    assert bot.read_text() == BOT


def test_a_human_who_quits_at_once_changes_no_file(tmp_path: Path) -> None:
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    old.write_text("keep me\n")
    for path, extra in ((new, ()), (old, ("--force",))):
        done = subprocess.run(
            [sys.executable, "-m", "arena", "play", "human", "greedy", "--replay", str(path), *extra],
            input="q\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 130 and "left the game (quit) after 0 of 1 games" in done.stderr
    assert not new.exists() and old.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


# -- arena tournament --replays DIR ----------------------------------------------------------


def tournament(db: Path, replays: Path, *extra: str) -> list[str]:
    return [
        "tournament",
        "greedy",
        "random",
        "-n",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(db),
        "--replays",
        str(replays),
        *extra,
    ]


def test_replays_folder_with_other_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "2p-t0-d0-r0.jsonl").write_text("my own notes\n")
    db = tmp_path / "t.sqlite"
    one_line_error(*run(capsys, *tournament(db, folder)), str(folder), "did not write", "--force")
    assert not db.exists() and (folder / "2p-t0-d0-r0.jsonl").read_text() == "my own notes\n"
    code, _, err = run(capsys, *tournament(db, folder, "--force"))
    assert code == 0, err
    assert check_file(str(folder / "2p-t0-d0-r0.jsonl")) == []  # told to: it wrote there


def test_another_tournaments_replays_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "replays"
    first = tmp_path / "first.sqlite"
    assert run(capsys, *tournament(first, folder))[0] == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(before) == [".arena-replays.json", "2p-t0-d0-r0.jsonl", "2p-t0-d0-r1.jsonl"]
    second = tmp_path / "second.sqlite"
    one_line_error(
        *run(capsys, *tournament(second, folder, "--seed", "9")), "replays of the tournament in", "first.sqlite"
    )
    assert not second.exists()
    first.unlink()  # a new tournament in the same database file is another tournament too
    one_line_error(*run(capsys, *tournament(first, folder)), "replays of the tournament")
    assert not first.exists()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.long
def test_sigterm_keeps_the_games_and_a_resume_keeps_writing_its_replays(tmp_path: Path) -> None:
    db, folder = tmp_path / "t.sqlite", tmp_path / "replays"
    argv = [
        "tournament",
        "greedy",
        "random",
        "greedy",
        "random",
        "-n",
        "30",
        "--seed",
        "2",
        "-q",
        "--workers",
        "2",
        "--db",
        str(db),
        "--replays",
        str(folder),
    ]
    proc = popen(*argv)
    wait_for_games(proc, db, 20)
    os.kill(proc.pid, signal.SIGTERM)  # `kill PID`: the main process only, as a service manager does
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    n = count_games(db)
    assert 0 < n < 120 and "Traceback" not in err
    assert f"terminated: {n} of 120 games are stored in {db}" in err and "Resume with:" in err
    assert out.startswith(f"(partial: {n} of 120 games played)\nOverall: {n} games")  # the standings so far
    done = run_process(*argv)
    assert done.returncode == 0, done.stderr
    records = sorted(folder.glob("*.jsonl"))
    assert count_games(db) == 120 and len(records) == 120
    assert all(check_file(str(p)) == [] for p in records)


# -- read-only commands --------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("db")
    done = run_process(
        "tournament",
        "greedy",
        "random",
        "heuristic",
        "-n",
        "2",
        "-q",
        "--workers",
        "1",
        "--db",
        str(folder / "t.sqlite"),
    )
    assert done.returncode == 0, done.stderr
    return folder / "t.sqlite"


def test_tournament_and_standings_leave_only_the_database(
    finished_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert [p.name for p in finished_db.parent.iterdir()] == ["t.sqlite"]  # no -wal/-shm after the run
    db = tmp_path / "copy.sqlite"
    shutil.copy(finished_db, db)
    before = db.read_bytes()
    for argv in (["standings", "--db", str(db)], ["standings", "--db", str(db), "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 0 and "Overall: 6 games" in out or '"games": 6' in out, err
    assert [p.name for p in tmp_path.iterdir()] == ["copy.sqlite"] and db.read_bytes() == before


def test_standings_read_a_database_on_read_only_media(finished_db: Path, tmp_path: Path) -> None:
    how = read_only_runner()
    if how is None:
        pytest.skip("neither a non-root user (chmod) nor mount namespaces (root) to make read-only media")
    expected = run_process("standings", "--db", str(finished_db))
    assert expected.returncode == 0
    if how == "chmod":
        media = tmp_path / "ro"
        media.mkdir()
        shutil.copy(finished_db, media / "t.sqlite")
        os.chmod(media / "t.sqlite", 0o444)
        os.chmod(media, 0o555)
        try:
            done = run_process("standings", "--db", str(media / "t.sqlite"))
            listing = sorted(p.name for p in media.iterdir())
        finally:
            os.chmod(media, 0o755)
    else:
        media = tmp_path / "mnt"
        media.mkdir()
        script = (
            f"mount -t tmpfs none {media} && cp {finished_db} {media}/t.sqlite && chmod 444 {media}/t.sqlite"
            f" && mount -o remount,ro {media} && {sys.executable} -m arena standings --db {media}/t.sqlite"
            f" && ls -A {media} >&2"
        )
        done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)
        listing = done.stderr.split()
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected.stdout
    assert listing == ["t.sqlite"]


# -- a closed stdout -------------------------------------------------------------------------


def test_a_closed_stdout_exits_quietly(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    proc = popen("play", "greedy", "random", "-n", "500", "--verbose", "--replay", str(record))
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    _, err = proc.communicate(timeout=120)
    assert first.startswith("game 1  seed ")
    assert proc.returncode == 141 and err == ""  # no traceback, no "Exception ignored"
    assert 0 < games_in(record) < 500 and check_file(str(record)) == []  # the records so far are kept


# -- SIGTERM as Ctrl-C in arena play ----------------------------------------------------------


def test_sigterm_stops_play_with_the_results_so_far(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    proc = popen("play", "greedy", "random", "-n", "1000000", "-q", "--json", "--replay", str(record))
    deadline = time.monotonic() + 60
    while games_in(record) < 5:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    doc = json.loads(out)
    n = doc["games"]
    assert doc["interrupted"] is True and "stopped_by" not in doc
    assert err == f"arena: terminated after {n} of 1000000 games; results so far:\n"
    assert games_in(record) == n and check_file(str(record)) == []
    assert all(row["games"] == n for row in doc["standings"])


# -- setups that fail before any work ----------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_ray_address_fails_before_ray_and_before_the_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = pytest.importorskip("ray")

    def no_init(*args: object, **kwargs: object) -> None:
        raise AssertionError("ray.init was called: minutes of retries before the error")

    monkeypatch.setattr(ray, "init", no_init)
    db = tmp_path / "t.sqlite"
    for address in (f"127.0.0.1:{closed_port()}", f"ray://localhost:{closed_port()}"):
        one_line_error(
            *run(
                capsys,
                "tournament",
                "greedy",
                "random",
                "-q",
                "--db",
                str(db),
                "--backend",
                "ray",
                "--ray-address",
                address,
            ),
            "cannot reach the Ray cluster at",
            address,
        )
    one_line_error(
        *run(
            capsys,
            "tournament",
            "greedy",
            "random",
            "-q",
            "--db",
            str(db),
            "--backend",
            "ray",
            "--ray-address",
            "a:b:c",
        ),
        "expected HOST:PORT",
    )
    assert not db.exists() and list(tmp_path.iterdir()) == []


def test_ray_addresses_parse() -> None:
    from arena.tournament.backends.local import HarnessError
    from arena.tournament.backends.ray_tasks import parse_address

    assert parse_address("10.1.2.3:6380") == ("10.1.2.3", 6380)
    assert parse_address("ray://head:10002") == ("head", 10002)
    assert parse_address("ray://head") == ("head", 10001)
    assert parse_address("head") == ("head", 6379)
    assert parse_address("[::1]:7000") == ("::1", 7000)
    assert parse_address("auto") is None
    for bad in ("http://x:1", "x:0", "x:99999", ":5", "x:port"):
        with pytest.raises(HarnessError):
            parse_address(bad)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["play", "greedy", "random", "--games", str(10**12)], "at most 1,000,000"),
        (["tournament", "greedy", "random", "--games", str(10**12)], "at most 100,000"),
        (["tournament", "greedy", "random", "--max-tables", str(10**12)], "at most 100,000"),
        (["tournament", "greedy", "random", "--players", "99"], "2 to 6 players sit at a table, not 99"),
        (["play", *["random"] * 99], "2 to 6 bots"),
        (["play", "greedy", "random", "--rule", "limit=-5"], "R2.3: limit must be 1 to 1000000, not -5"),
        (["play", "greedy", "random", "--rule", "max_rounds=1000000000"], "R2.4: max_rounds must be"),
        (["play", "greedy", "random", "--rule", "max_moves=0"], "R8.4: max_moves must be"),
        (["play", "greedy", "random", "--rule", "hand_size=40"], "R3.1: hand_size must be 1 to 7, not 40"),
        (["play", *["random"] * 6, "--rule", "hand_size=7"], "R3.1: 6 hands of 7 and an opening card do not fit"),
        (
            [
                "tournament",
                "greedy",
                "random",
                "heuristic",
                "--players",
                "2-3",
                "--rule",
                "hand_size=7",
                "--players",
                "6",
            ],
            "a table of 6 needs at least 6 bots",
        ),
        (["tournament", *["random"] * 6, "--players", "6", "--rule", "hand_size=6"], "R3.1: 6 hands of 6"),
        (["play", "greedy", "random", "--rule", "points=a:100000"], "R1.3: points of rank a must be"),
        (["play", "greedy", "random", "--rule", "jack_finish=-3"], "jack_finish must be 0 to 10000"),
    ],
)
def test_absurd_values_are_refused_before_any_work(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.game.referee

    def no_game(*args: object, **kwargs: object) -> None:
        raise AssertionError("a game was played")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(arena.game.referee.Referee, "play", no_game)
    one_line_error(*run(capsys, *argv), needle)
    assert list(tmp_path.iterdir()) == []  # no database, no record


def test_a_huge_schedule_is_refused_before_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.game.rules import CONTEST
    from arena.tournament import runner

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("the schedule was built")

    monkeypatch.setattr(runner.Schedule, "build", no_build)
    with pytest.raises(runner.SetupError, match=r"about 3,380,000,000 games; at most 10,000,000"):
        runner.plan(["greedy", "random"] * 10, sizes=(2, 3, 4, 5, 6), deals=100_000, seed=0, rules=CONTEST)


@pytest.mark.parametrize(
    "setting",
    [
        "points=a",
        "points=7:",
        "points=",
        "points=7:1e9",
        "points=x:1",
        "points=7:5,,a:1",
        "points=:5",
        "limit",
        "limit=",
        "limit=1e3",
        "limit=" + "9" * 5000,
        "burn=x",
        "teams=maybe",
        "stacked_effects=2",
        "first_player=loser",
        "colour=red",
        "name=mine",
        "=5",
        "hand_size=seven",
    ],
)
def test_every_rule_parse_error_is_one_plain_line(setting: str, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["rules"], ["play", "greedy", "random", "-q"]):
        code, out, err = run(capsys, *command, "--rule", setting)
        one_line_error(code, out, err)
        assert err.startswith("arena: error: ") and len(err) < 300, err
        for noise in ("invalid literal", "Traceback", "Error", "base 10", "<class", "()"):
            assert noise not in err, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_between_record_and_tally_waits_for_both(
    signum: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race SIGTERM once won: the third game's record written, then the signal, then no
    tally, so the file held a game the results lacked. The signal now waits for both."""
    import arena.playing.match as match

    real_record = match.record
    calls = []

    def signal_mid_game(outcome, order, tallies):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signum)  # after the record is written, before the tally
        real_record(outcome, order, tallies)

    monkeypatch.setattr(match, "record", signal_mid_game)
    path = tmp_path / "r.jsonl"
    code, out, _ = run(capsys, "play", "greedy", "random", "-n", "50", "-q", "--json", "--replay", str(path))
    assert code == 128 + signum
    assert json.loads(out)["games"] == 3 == games_in(path) == len(calls)
    assert check_file(str(path)) == []


def test_a_deferred_block_holds_ctrl_c_to_its_end_and_restores_the_handlers() -> None:
    """interrupts_deferred, through the C signal functions: a Ctrl-C inside the block is raised
    at its end, never inside; an ignored SIGTERM stays ignored; the handlers come back as they were."""
    from arena.playing.interrupts import interrupts_deferred

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    steps = []
    old_term = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_deferred():
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGTERM)  # ignored before the block: stays ignored
                steps.append("after the signals")
            steps.append("never")
        assert steps == ["after the signals"]
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, old_term)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
