"""Submissions are what was checked: ``arena submit`` stores exactly the bytes it checked, and a
tournament over a submissions folder plays only files that match their manifests (name, sha256),
the very bytes it verified, and shows the manifests' authors."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.cli import one_line_error, run

import arena.authoring.check as author
from arena.authoring import submissions
from arena.cli import submit

CLEAN = '''"""Swapper: an honest bot while it is checked."""


class Bot:
    name = "swapper"

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
#: What the attacker swaps in once the check has read the file: it would never pass the check.
EVIL = '''"""Swapper: the real thing."""
import os


class Bot:
    name = "swapper"

    def move(self, turn):
        raise RuntimeError(os.getcwd())
'''


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# -- arena submit: read once, check and store those bytes --------------------------------------


@pytest.mark.parametrize("when", ["before the check", "during the smoke games"])
def test_a_file_swapped_during_the_check_is_not_stored(
    when: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: submit a clean file and swap it for another while `arena submit` runs, so
    that the stored file (and what the tournament plays) is one that was never checked."""
    bot = tmp_path / "swapper.py"
    bot.write_text(CLEAN)
    if when == "before the check":
        real_check = submit.run_check

        def swap_then_check(path: str, settings: Any, data: bytes | None = None) -> Any:
            bot.write_text(EVIL)
            return real_check(path, settings, data=data)

        monkeypatch.setattr(submit, "run_check", swap_then_check)
    else:
        real_games = author.play_smoke_games

        def swap_midway(report: Any, src: Any, factory: Any, **kw: Any) -> None:
            bot.write_text(EVIL)
            real_games(report, src, factory, **kw)

        monkeypatch.setattr(author, "play_smoke_games", swap_midway)
    folder = tmp_path / "subs"
    code, out, err = run(capsys, "submit", str(bot), "--to", str(folder), "--games", "1", "--author", "Mallory")
    assert code == 0, out + err
    assert bot.read_text() == EVIL  # the swap happened
    stored = folder / "swapper.py"
    manifest = json.loads((folder / "swapper.json").read_text())
    assert stored.read_text() == CLEAN
    assert manifest["sha256"] == sha(CLEAN) == hashlib.sha256(stored.read_bytes()).hexdigest()
    assert manifest["check"]["sha256"] == sha(CLEAN)
    code, out, err = run(
        capsys,
        "tournament",
        str(folder),
        "greedy",
        "-n",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(tmp_path / "t.sqlite"),
        "--json",
    )
    assert code == 0, err
    rows = {r["bot"]: r for r in json.loads(out)["overall"]["standings"]}
    assert rows["swapper"]["faults"] == 0 and rows["swapper"]["author"] == "Mallory"


def test_an_unreadable_file_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "big.py"
    bot.write_bytes(b"#" * (300 * 1024))
    code, out, err = run(capsys, "submit", str(bot), "--to", str(tmp_path / "subs"))
    assert code == 1 and err.count("\n") == 1 and "the limit is" in err
    assert not (tmp_path / "subs").exists()


def test_submit_never_overwrites_a_json_file_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "swapper.py"
    bot.write_text(CLEAN)
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "swapper.json").write_text('{"my": "settings"}')
    for extra in ((), ("--replace",)):
        code, out, err = run(capsys, "submit", str(bot), "--to", str(folder), "--games", "1", *extra)
        assert code == 1 and "is not the manifest of a submitted bot" in err and err.count("\n") == 1
    assert (folder / "swapper.json").read_text() == '{"my": "settings"}' and not (folder / "swapper.py").exists()


# -- arena tournament over a submissions folder -------------------------------------------------


@pytest.fixture(scope="module")
def submitted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A submissions folder with two bots submitted by their authors."""
    from arena.cli import main

    home = tmp_path_factory.mktemp("authors")
    folder = home / "subs"
    for name, who in (("ann", "Ann Lee"), ("bo", "Bo Chen")):
        path = home / f"{name}.py"
        path.write_text(CLEAN.replace('name = "swapper"', f'name = "{name}"'))
        assert main(["submit", str(path), "--to", str(folder), "--games", "1", "--author", who, "--json"]) == 0
    return folder


def copy_folder(folder: Path, to: Path) -> Path:
    to.mkdir()
    for p in folder.iterdir():
        (to / p.name).write_bytes(p.read_bytes())
    return to


def test_verified_files_play_and_the_standings_show_their_authors(
    submitted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.sqlite"
    code, out, err = run(
        capsys, "tournament", str(submitted), "greedy", "-n", "1", "-q", "--workers", "1", "--db", str(db), "--no-h2h"
    )
    assert code == 0, err
    table = out.split("\n\n")[0].splitlines()[1:]  # the standings table (notes and more tables follow)
    header, *rows = [line.split() for line in table if line.strip() and not line.startswith(("-", "Ranked by"))]
    assert header[:4] == ["rank", "bot", "kind", "author"]
    authors = {row[1]: " ".join(row[3:-7]) for row in rows}  # 7 columns after the author
    assert authors == {"ann": "Ann Lee", "bo": "Bo Chen", "greedy": "-"}
    code, out, _ = run(capsys, "standings", "--db", str(db), "--json")
    doc = json.loads(out)
    assert {b["label"]: b["author"] for b in doc["bots"]} == {"ann": "Ann Lee", "bo": "Bo Chen", "greedy": None}
    assert {r["bot"]: r["author"] for r in doc["overall"]["standings"]} == {
        "ann": "Ann Lee",
        "bo": "Bo Chen",
        "greedy": None,
    }


def test_files_that_do_not_match_their_submission_are_refused(
    submitted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_folder(submitted, tmp_path / "subs")
    (folder / "ann.py").write_text((folder / "ann.py").read_text() + "# edited after submission\n")
    (folder / "eve.py").write_text(CLEAN.replace("swapper", "eve"))  # never submitted
    (folder / "bo.json").write_text("{damaged")  # a damaged manifest
    db = tmp_path / "t.sqlite"
    code, out, err = run(capsys, "tournament", str(folder), "-n", "1", "-q", "--db", str(db))
    one_line_error(
        code,
        out,
        err,
        "3 bot files in a submissions folder do not match their submission",
        "ann.py (changed since submission",
        "bo.py (damaged manifest)",
        "eve.py (no manifest)",
        "--allow-unverified",
    )
    assert not db.exists()
    # naming the files one by one does not get round it
    one_line_error(
        *run(capsys, "tournament", str(folder / "ann.py"), "greedy", "-q", "--db", str(db)),
        "ann.py (changed since submission",
    )
    assert not db.exists()
    code, out, err = run(
        capsys,
        "tournament",
        str(folder),
        "-n",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(db),
        "--allow-unverified",
        "--json",
    )
    assert code == 0, err
    assert (
        err.startswith("arena: warning: --allow-unverified: playing 3 bot files that do not match")
        and "eve.py (no manifest)" in err
    )
    doc = json.loads(out)
    assert sorted(b["label"] for b in doc["bots"]) == ["ann", "bo", "eve"]
    assert "author" not in doc["overall"]["standings"][0]  # none verified: no authors to show


def test_a_manifest_for_another_file_does_not_verify(
    submitted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_folder(submitted, tmp_path / "subs")
    (folder / "cy.py").write_bytes((folder / "ann.py").read_bytes())  # same bytes, other name
    (folder / "cy.json").write_bytes((folder / "ann.json").read_bytes())
    one_line_error(
        *run(capsys, "tournament", str(folder), "-q", "--db", str(tmp_path / "t.sqlite")), "cy.py (manifest of ann.py)"
    )


def test_a_folder_without_manifests_plays_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "one.py").write_text(CLEAN.replace("swapper", "one"))
    (folder / "two.py").write_text(CLEAN.replace("swapper", "two"))
    (folder / "notes.json").write_text('{"not": "a manifest"}')
    code, out, err = run(
        capsys,
        "tournament",
        str(folder),
        "-n",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(tmp_path / "t.sqlite"),
        "--json",
    )
    assert code == 0 and err == "", err
    assert [b["label"] for b in json.loads(out)["bots"]] == ["one", "two"]


def test_the_tournament_plays_the_bytes_it_verified(
    submitted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: swap a file right after the tournament verified it, before the games."""
    folder = copy_folder(submitted, tmp_path / "subs")
    real_verify = submissions.verify

    def verify_then_swap(paths: Any) -> Any:
        result = real_verify(paths)
        (folder / "ann.py").write_text(EVIL.replace("swapper", "ann"))
        return result

    monkeypatch.setattr(submissions, "verify", verify_then_swap)
    db = tmp_path / "t.sqlite"
    code, out, err = run(
        capsys, "tournament", str(folder), "-n", "1", "-q", "--workers", "2", "--db", str(db), "--json"
    )
    assert code == 0, err
    rows = {r["bot"]: r for r in json.loads(out)["overall"]["standings"]}
    assert rows["ann"]["faults"] == 0 and rows["ann"]["games"] == 2
    manifest = json.loads((folder / "ann.json").read_text())
    conn = sqlite3.connect(db)
    stored = conn.execute("SELECT sha256 FROM bots WHERE label = 'ann'").fetchone()[0]
    conn.close()
    assert stored == manifest["sha256"] != hashlib.sha256((folder / "ann.py").read_bytes()).hexdigest()
