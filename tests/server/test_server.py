"""The contest server as users run it (issue 21, items 1-3 and 7): tokens, uploads, checks, the ladder,
refusals as one-line JSON 4xx, and kill -9 losing nothing and counting nothing twice."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.server import Server, arena, arena_all, bot_file, token_of, wait_for

pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    base = tmp_path_factory.mktemp("contest")
    folder = base / "cup"
    made = arena("contest", "init", str(folder), "--name", "Test Cup", "--house", "none")
    assert made.returncode == 0, made.stderr
    organiser = token_of(made.stdout.splitlines()[-1])
    again = arena("contest", "init", str(folder))
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "exists" in again.stderr
    tokens = {name: token_of(arena("contest", "invite", str(folder), name).stdout) for name in ("ann", "ben", "cat")}
    server = Server(folder, "--uploads-per-minute", "4")
    server.start()
    try:
        pairs = (("ann", "annbot"), ("ben", "benbot"))
        runs = [
            (["submit", str(bot_file(base, bot)), "--server", server.url], {"ARENA_TOKEN": tokens[author]})
            for author, bot in pairs
        ]
        for (_, bot), done in zip(pairs, arena_all(*runs), strict=True):
            assert done.returncode == 0, done.stderr
            assert f"{bot}: clean; active on the ladder" in done.stdout and "time per move" in done.stdout
        yield {"server": server, "folder": folder, "base": base, "tokens": tokens, "organiser": organiser}
    finally:
        err = server.stop()
    # Ctrl-C stops it as it stops every arena command: one line, status 130, workers gone, no traceback
    assert server.proc is not None and server.proc.returncode == 130 and "Traceback" not in err, err
    assert server.workers() == []


def board(server: Server) -> dict[str, dict[str, object]]:
    status, data = server.get("/api/leaderboard")
    assert status == 200
    return {b["bot"]: b for b in data["bots"]}


def test_both_uploads_play_on_the_ladder(contest: dict[str, object]) -> None:
    server = contest["server"]
    assert isinstance(server, Server)
    wait_for(
        lambda: all(b.get("games", 0) > 0 for b in board(server).values()) and len(board(server)) == 2,
        "both bots to play ladder games",
    )
    page = server.get("/")[1]
    assert 'data-bot="annbot"' in page and "data-rank=" in page


def test_wrong_token_oversized_upload_and_strangers_are_refused(contest: dict[str, object]) -> None:
    server, tokens = contest["server"], contest["tokens"]
    assert isinstance(server, Server) and isinstance(tokens, dict)
    source = b'class Bot:\n    name = "x"\n'
    for header in (
        {},
        {"Authorization": "Bearer a1.wrong"},
        {"Authorization": "Bearer o.wrong"},
        {"Authorization": tokens["ann"]},
        {"Authorization": "Bearer a99999999999999999999.x"},
    ):
        status, data = server.request("POST", "/api/submissions", source, header)
        assert status == 401 and set(data) == {"error"}, (header, status, data)
    big = b"# " + b"x" * (256 * 1024) + b"\n"
    status, data = server.request("POST", "/api/submissions", big, {"Authorization": f"Bearer {tokens['cat']}"})
    assert status == 413 and "larger than" in data["error"]
    # someone else's upload is as absent as a missing one; a bad route or id is a JSON 404, never a 500
    anns = [sid for sid in (1, 2) if server.get(f"/api/submissions/{sid}", tokens["ann"])[0] == 200]
    assert len(anns) == 1 and server.get(f"/api/submissions/{anns[0]}", tokens["ben"])[0] == 404
    for path in (
        "/api/submissions/1x",
        "/api/submissions/99999999999999999999",
        "/nowhere",
        "/bots/nobody",
        "/games/none",
        "/desk/1",
        "/submissions/1",
    ):
        status, data = server.get(path, tokens["ann"])
        assert 400 <= status < 500 and isinstance(data, dict) and data["error"], (path, status, data)
    status, data = server.request(
        "POST", "/api/submissions", b"class Bot:\n    name = 'annbot'\n", {"Authorization": f"Bearer {tokens['ben']}"}
    )
    assert status == 409 and "another author" in data["error"]


def test_a_broken_bot_gets_its_one_line_error_and_never_plays(contest: dict[str, object]) -> None:
    server, tokens, base = contest["server"], contest["tokens"], contest["base"]
    assert isinstance(server, Server) and isinstance(tokens, dict) and isinstance(base, Path)
    broken = base / "broken.py"
    broken.write_text('class Bot:\n    name = "broken"\n    def move(self, turn)\n        return None\n')
    # a bot that tries to write a file when loaded: checked (and played) only in the sandbox
    planted = base / "planted.txt"
    sneaky = base / "sneaky.py"
    sneaky.write_text(
        f'open({str(planted)!r}, "w").write("x")\nclass Bot:\n    name = "sneaky"\n'
        "    def move(self, turn):\n        return turn.legal[0]\n"
    )
    both = arena_all(
        *[(["submit", str(f), "--server", server.url, "--token", tokens["cat"]], {}) for f in (broken, sneaky)]
    )
    done = both[0]
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "the check failed: broken.py:3" in done.stderr, done.stderr
    assert both[1].returncode == 1 and "the check failed" in both[1].stderr
    assert "broken" not in board(server) and "sneaky" not in board(server)
    assert not planted.exists()
    db = sqlite3.connect(f"file:{contest['folder']}/contest.db?mode=ro", uri=True)
    assert (
        db.execute(
            "SELECT COUNT(*) FROM seats JOIN submissions s ON s.id = seats.submission "
            "WHERE s.bot IN ('broken', 'sneaky')"
        ).fetchone()[0]
        == 0
    )


def test_the_same_file_submitted_again_is_the_same_version(contest: dict[str, object]) -> None:
    server, tokens, base = contest["server"], contest["tokens"], contest["base"]
    assert isinstance(server, Server) and isinstance(tokens, dict) and isinstance(base, Path)
    before = board(server)["annbot"]
    done = arena("submit", str(bot_file(base, "annbot")), "--server", server.url, "--token", tokens["ann"])
    assert done.returncode == 0, done.stderr
    assert "annbot.py: identical to v1: no new version was made; its check:" in done.stdout
    assert "annbot v1: check clean" in done.stdout and "annbot: clean; active on the ladder" in done.stdout
    assert board(server)["annbot"]["version"] == before["version"] == 1


def test_uploads_past_the_rate_limit_get_429(contest: dict[str, object]) -> None:
    server, tokens = contest["server"], contest["tokens"]
    assert isinstance(server, Server) and isinstance(tokens, dict)
    seen = []
    for i in range(6):
        status, _ = server.request(
            "POST", f"/api/submissions?name=spam{i}", b"not python(\n", {"Authorization": f"Bearer {tokens['ben']}"}
        )
        seen.append(status)
    assert 429 in seen and seen[0] == 202, seen


def test_forms_refuse_a_missing_or_wrong_csrf_token(contest: dict[str, object]) -> None:
    server, organiser = contest["server"], contest["organiser"]
    assert isinstance(server, Server)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, data = server.request("POST", "/login", f"token={organiser}".encode(), form)
    assert status == 403 and "CSRF" in data["error"]
    status, data = server.request("POST", "/login", f"token={organiser}&csrf=guess".encode(), form)
    assert status == 403
    assert server.get("/desk")[0] == 401  # organiser pages need the organiser's session


def integrity(folder: Path) -> tuple[int, int]:
    """(games, seats) of the database, after checking each rating counts each of its games once."""
    db = sqlite3.connect(f"file:{folder}/contest.db?mode=ro", uri=True)
    rated = dict(db.execute("SELECT submission, games FROM ratings").fetchall())
    seated = dict(db.execute("SELECT submission, COUNT(*) FROM seats GROUP BY submission").fetchall())
    assert {k: v for k, v in rated.items() if v} == seated
    games = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    seats = db.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    db.close()
    return games, seats


def running(pid: int) -> bool:
    try:
        return b"arena.server.workers.processes" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def test_kill_9_of_a_worker_and_of_the_server_loses_no_game(contest: dict[str, object]) -> None:
    server, folder = contest["server"], contest["folder"]
    assert isinstance(server, Server) and isinstance(folder, Path)
    wait_for(lambda: integrity(folder)[0] >= 2, "some games")
    workers = server.workers()
    assert len(workers) == 6
    for pid in workers:  # two check workers, two build workers, the ladder and the tables worker, mid-work
        os.kill(pid, 9)
    wait_for(lambda: len(server.workers()) == 6 and not set(server.workers()) & set(workers), "new workers")
    before = integrity(folder)[0]
    wait_for(lambda: integrity(folder)[0] > before, "the ladder to go on after a worker died")
    orphans = server.workers()
    server.kill9()
    kept = integrity(folder)[0]
    wait_for(lambda: not any(running(p) for p in orphans), "the workers to notice the server is gone")
    server.start()
    assert integrity(folder)[0] >= kept
    wait_for(lambda: integrity(folder)[0] > kept, "the ladder to go on after the restart")
    assert set(board(server)) == {"annbot", "benbot"}
