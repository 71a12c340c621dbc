"""Every kind of bot on the contest server (issue 21, item 2): `arena submit --server` sends a
`.js` file or a bot folder (bot.toml) as its bundle, exactly as a tournament stores it; the server
checks it in the sandbox as `arena check` does, the ladder plays it, the final writes it back as
the file or folder it was; a hostile bundle is a one-line 400 and is never stored."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from support.server import ROOT, Server, arena, arena_all, token_of, wait_for

from arena.server.contest.lineup import Entry
from arena.server.contest.publish import write_entrant
from arena.server.contest.review import files_of
from arena.server.contest.uploads import as_stored
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.store import database as store
from arena.trust.botfolder import BUNDLE_MAGIC, bundle
from arena.trust.botsource import read_bot_file

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SHED = ROOT / "examples" / "shed.js"
STDIO = ROOT / "examples" / "kits" / "python-stdio"


@pytest.mark.long
def test_a_js_file_and_a_bot_folder_uploaded_by_arena_submit_are_checked_and_play(tmp_path: Path) -> None:
    if shutil.which("node") is None or not (ROOT / "node_modules").is_dir():
        pytest.skip("node (and npm ci) needed for JavaScript bots")
    folder = tmp_path / "cup"
    arena("contest", "init", str(folder), "--house", "none")
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    ben = token_of(arena("contest", "invite", str(folder), "ben").stdout)
    kit = tmp_path / "kit"
    shutil.copytree(STDIO, kit)
    server = Server(folder, "--check-workers", "2")  # the two checks at once
    server.start()
    try:
        js, prog = arena_all(  # two authors at once
            (["submit", str(SHED), "--server", server.url], {"ARENA_TOKEN": ann}),
            (["submit", str(kit), "--server", server.url], {"ARENA_TOKEN": ben}),
        )
        assert js.returncode == 0, js.stdout + js.stderr
        assert "shed v1: check clean" in js.stdout and "shed: clean; active on the ladder" in js.stdout
        assert prog.returncode == 0, prog.stdout + prog.stderr
        assert "stdio-py: clean; active on the ladder" in prog.stdout
        db = store.open_db(folder)
        try:  # stored as the tournament's loader reads the same files: its bundle, byte for byte
            stored = {r["bot"]: bytes(r["source"]) for r in db.execute("SELECT bot, source FROM submissions")}
        finally:
            db.close()
        assert stored == {
            "shed": read_bot_file(SHED).source.encode(),
            "stdio-py": read_bot_file(kit).source.encode(),
        }

        def played() -> bool:
            bots = server.get("/api/leaderboard")[1]["bots"]
            return {b["bot"] for b in bots} == {"shed", "stdio-py"} and all(b["games"] >= 1 for b in bots)

        wait_for(played, "both programs to play on the ladder")
    finally:
        server.stop()


def test_the_final_writes_each_stored_kind_back_as_the_loader_reads_it(tmp_path: Path) -> None:
    kinds = {
        "pybot": (ROOT / "bots" / "greedy.py").read_bytes(),
        "shed": read_bot_file(SHED).source.encode(),
        "stdio-py": read_bot_file(STDIO).source.encode(),
    }
    for _ in range(2):  # written again when the final is resumed: the same files
        for bot, data in kinds.items():
            write_entrant(tmp_path, Entry(bot, 1, bot, 1, "ann", None, 1), data)
    for bot in kinds:  # each with its manifest, whose sha256 is what the tournament hashes of it
        manifest = json.loads((tmp_path / f"{bot}.json").read_text())
        played = tmp_path / manifest["file"]
        assert manifest["author"] == "ann" and manifest["sha256"] == read_bot_file(played).sha256
    assert read_bot_file(tmp_path / "pybot.py").source.encode() == kinds["pybot"]
    assert read_bot_file(tmp_path / "shed.js").source.encode() == kinds["shed"]
    assert read_bot_file(tmp_path / "stdio-py").source.encode() == kinds["stdio-py"]
    files, problem = files_of("stdio-py", kinds["stdio-py"])  # what the organiser reads on the desk: the files
    assert problem is None and 'run = "python3 -I bot.py"' in (dict(files)["bot.toml"] or "")


def hostile(files: list[list[str]], runtime: str = "program") -> bytes:
    return (BUNDLE_MAGIC + json.dumps({"runtime": runtime, "files": files})).encode()


def test_hostile_bundles_and_files_are_refused_in_one_line_and_never_stored(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    token = store.invite(db, "ann")
    toml = ["bot.toml", "text", 'language = "python"\nrun = "python3 bot.py"\n']
    attacks = {
        "escape.bundle": hostile([toml, ["../../etc/x", "text", "x"]]),  # a path out of the bot's folder
        "abs.bundle": hostile([["/tmp/x", "text", "x"], toml]),
        "hidden.bundle": hostile([toml, [".git/config", "text", "x"]]),
        "notoml.bundle": hostile([["bot.py", "text", "x"]]),
        "dupe.bundle": hostile([toml, toml]),
        "runtime.bundle": hostile([toml], runtime="shell"),
        "json.bundle": BUNDLE_MAGIC.encode() + b"{not json",
        "b64.bundle": hostile([toml, ["bin", "base64", "!!!"]]),
        "latin.js": b"// \xff\xfe not UTF-8\n",
    }
    try:
        with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
            for name, data in attacks.items():
                answer = client.post(
                    f"/api/submissions?name={name}", content=data, headers={"Authorization": f"Bearer {token}"}
                )
                error = answer.json().get("error", "")
                assert answer.status_code == 400 and "\n" not in error and "Traceback" not in error, (name, error)
            assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 0
            # the same bundle rules hold for the form's raw .js: bundled here exactly as the loader does
            raw = SHED.read_bytes()
            assert as_stored(raw, "shed.js") == bundle("node", (("bot.js", raw),)).encode()
            answer = client.post(
                "/api/submissions?name=shed.js", content=raw, headers={"Authorization": f"Bearer {token}"}
            )
            assert answer.status_code == 202
            row = store.submission(db, answer.json()["id"])
            assert row is not None and row["bot"] == "shed" and bytes(row["source"]) == as_stored(raw, "shed.js")
    finally:
        db.close()


DEMO = ROOT / "examples" / "demo2012.js"


@pytest.mark.long
def test_the_2012_announcements_demo_is_accepted_by_the_server(tmp_path: Path) -> None:
    """The listing, byte for byte, uploaded as an author would: the server's check is clean with no
    warning, and it plays on the ladder (issue 29)."""
    if shutil.which("node") is None or not (ROOT / "node_modules").is_dir():
        pytest.skip("node (and npm ci) needed for JavaScript bots")
    folder = tmp_path / "cup"
    arena("contest", "init", str(folder), "--house", "none")
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    ben = token_of(arena("contest", "invite", str(folder), "ben").stdout)
    server = Server(folder)
    server.start()
    try:
        demo, other = arena_all(
            (["submit", str(DEMO), "--server", server.url], {"ARENA_TOKEN": ann}),
            (["submit", str(SHED), "--server", server.url], {"ARENA_TOKEN": ben}),
        )
        assert demo.returncode == 0 and other.returncode == 0, demo.stdout + demo.stderr + other.stderr
        assert "demo2012 v1: check clean" in demo.stdout and "demo2012: clean; active on the ladder" in demo.stdout
        assert "warning" not in demo.stdout and "FAULT" not in demo.stdout, demo.stdout
        for size in (2, 3, 4, 6):  # the tables as `arena check` shows them: opponents as they sat
            assert f"  {size} players: 1 game (vs " in demo.stdout, demo.stdout

        def played() -> bool:
            bots = {b["bot"]: b for b in server.get("/api/leaderboard")[1]["bots"]}
            return "demo2012" in bots and bots["demo2012"]["games"] >= 1

        wait_for(played, "the demo to play on the ladder")
    finally:
        server.stop()


def test_the_servers_check_and_a_local_one_say_the_same_of_each_kind(tmp_path: Path) -> None:
    """One description and one warning per kind, whether checked here or from the server's stored
    bytes: a folder's bot.toml description counts (no "no docstring"), a .js file's warning speaks
    of a comment, a Python file's of a docstring (ROUGH_EDGES "2012 bots and programs")."""
    from arena.authoring.check import CheckSettings, run_check
    from arena.server.contest.checks import check_one

    quiet_js = tmp_path / "quiet.js"
    quiet_js.write_text(SHED.read_text(encoding="utf-8").split("\n", 2)[2], encoding="utf-8")  # no opening comment
    quiet_py = tmp_path / "quiet.py"
    quiet_py.write_text((ROOT / "bots" / "greedy.py").read_text(encoding="utf-8").split('"""', 2)[2])
    settings = CheckSettings(games=1)
    warned = {}
    for path in (STDIO, quiet_js, quiet_py):
        local = run_check(str(path), settings)
        name = read_bot_file(path).name
        data = read_bot_file(path).source.encode() if path.suffix != ".py" else path.read_bytes()
        served, _error, _games = check_one({"bot": name, "source": data}, settings)  # type: ignore[arg-type]  # a row
        assert local.description == served["description"] and local.warnings == served["warnings"], path
        warned[path.suffix] = " ".join(local.warnings)
    assert warned[""] == ""  # the folder: its bot.toml has a description
    assert "comment" in warned[".js"] and "docstring" not in warned[".js"]
    assert "docstring" in warned[".py"]
