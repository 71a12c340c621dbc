"""The bot author's commands: ``arena new``, ``check``, ``submit`` and ``rules``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from support.cli import run

TEMPLATE_BOT = "mybot"


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(source, encoding="utf-8")
    return path


PLAYS = """
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
"""


@pytest.fixture
def new_bot(tmp_path, capsys) -> Path:
    """A bot written by ``arena new`` into a temporary folder."""
    code, out, err = run(capsys, "new", tmp_path / f"{TEMPLATE_BOT}.py")
    assert code == 0, err
    return tmp_path / f"{TEMPLATE_BOT}.py"


# -- arena new ------------------------------------------------------------------------


def test_new_writes_a_commented_bot(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "new", "shedder")
    assert code == 0 and err == ""
    path = tmp_path / "shedder.py"
    source = path.read_text()
    assert out.startswith("wrote shedder.py: a working bot named 'shedder'")
    assert 'name = "shedder"' in source and "class Bot:" in source and "def move(self, turn):" in source
    for topic in (
        "turn.first",
        "turn.puttable()",
        "R6.4",
        "R5",
        "turn.draw()",
        "turn.finish()",
        "turn.players",
        "turn.pile",
    ):
        assert topic in source, topic
    compile(source, "shedder.py", "exec")


@pytest.mark.parametrize("name", ["x", "a" * 40])
def test_new_keeps_one_column_for_the_commands_comments(tmp_path, capsys, monkeypatch, name):
    """The template's commands to try: their "--" explanations in one column, whatever the name."""
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "new", name)[0] == 0
    tried = [line for line in (tmp_path / f"{name}.py").read_text().splitlines() if line.startswith("#   arena ")]
    assert len(tried) == 4 and f"#   arena check {name}.py " in tried[2]
    assert len({line.index(" -- ") for line in tried}) == 1, tried


def test_new_refuses_to_overwrite(new_bot, capsys):
    before = new_bot.read_text()
    new_bot.write_text(before + "# my changes\n")
    code, out, err = run(capsys, "new", new_bot)
    assert code == 2 and out == ""
    assert err == f"arena: error: {new_bot} already exists; choose another name or move that file away\n"
    assert new_bot.read_text().endswith("# my changes\n")


@pytest.mark.parametrize("name", ["9lives", "my bot", "a/b/../", "x" * 41, "human", "bad.name"])
def test_new_refuses_bad_names(tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "new", name)
    assert code == 2 and err.startswith("arena: error: ") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_new_refuses_a_missing_folder(tmp_path, capsys):
    code, out, err = run(capsys, "new", tmp_path / "nowhere" / "bot.py")
    assert code == 2 and "no such folder" in err


def test_the_new_bot_plays(new_bot, capsys):
    code, out, err = run(capsys, "play", new_bot, "random", "--games", "4", "--trusted", "--json")
    assert code == 0, err
    rows = json.loads(out)["standings"]
    assert rows[0]["bot"] == TEMPLATE_BOT and rows[0]["games"] == 4 and rows[0]["faults"] == 0


# -- arena check ----------------------------------------------------------------------


def test_check_passes_the_new_bot(new_bot, capsys):
    code, out, err = run(capsys, "check", new_bot)
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith(f"checking {new_bot}: bot '{TEMPLATE_BOT}', sha256 ")
    assert re.search(r"^  sandbox.+", out, re.M)
    for n in (2, 3, 4, 6):
        # each game's opponents, as they sat: n - 1 of them per game, never more
        found = re.search(rf"^  {n} players: 2 games \((vs [^;]+); (vs [^;]+)\); places .*; no faults$", out, re.M)
        assert found, (n, out)
        assert all(len(lineup.removeprefix("vs ").split("+")) == n - 1 for lineup in found.groups()), found.groups()
    assert re.search(r"^  time per move: median [\d.]+ ms, worst [\d.]+ ms over \d+ moves \(CPU time\)$", out, re.M)
    assert lines[-1] == f"{new_bot}: clean"


def test_check_json(new_bot, capsys):
    code, out, err = run(capsys, "check", new_bot, "--json", "--games", "1")
    assert code == 0, err
    report = json.loads(out)
    assert report["clean"] is True and report["problems"] == [] and report["faults"] == []
    assert report["sha256"] == hashlib.sha256(new_bot.read_bytes()).hexdigest()
    assert [t["players"] for t in report["tables"]] == [2, 3, 4, 6]
    assert report["move_time"]["moves"] > 0 and report["move_time"]["worst_ms"] >= report["move_time"]["median_ms"]
    assert isinstance(report["sandbox"]["layers"], dict) and report["sandbox"]["summary"]


BROKEN = {
    "syntax": ('"""Broken."""\nclass Bot:\n    def move(self, turn)\n        turn.finish()\n', 3, "syntax error"),
    "no-bot": (
        '"""No Bot."""\nclass Player:\n    def move(self, turn):\n        turn.finish()\n',
        None,
        "no class named Bot",
    ),
    "import": (
        '"""Imports os."""\nimport random\nimport os\n\nclass Bot:\n    def move(self, turn):\n        turn.finish()\n',
        3,
        "'os'",
    ),
    "underscore": (
        '"""Pokes at internals."""\nclass Bot:\n    def move(self, turn):\n'
        "        secret = turn._move\n        turn.finish()\n",
        4,
        "_move",
    ),
    "load-error": (
        '"""Fails while loading."""\nSIZE = 1 // 0\n\nclass Bot:\n    def move(self, turn):\n        turn.finish()\n',
        None,
        "error while loading: ZeroDivisionError",
    ),
    "signature": (
        '"""Wrong signature."""\nclass Bot:\n    def move(self):\n        pass\n',
        3,
        "move must accept (self, turn)",
    ),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_check_reports_each_kind_of_broken_bot_with_its_line(tmp_path, capsys, kind):
    source, line, message = BROKEN[kind]
    path = write(tmp_path, f"{kind}.py", source)
    code, out, err = run(capsys, "check", path)
    assert code == 1, out + err
    problems = [line for line in out.splitlines() if line.startswith("  PROBLEM ")]
    assert len(problems) == 1, out
    where = f"{path}:{line}: " if line else f"{path}: "
    assert problems[0].startswith(f"  PROBLEM {where}"), problems[0]
    assert message in problems[0]
    assert out.splitlines()[-1] == f"{path}: NOT clean (1 problem)"
    assert "players:" not in out  # no smoke game with a broken bot
    report = json.loads(run(capsys, "check", path, "--json")[1])
    assert report["clean"] is False and report["problems"][0]["line"] == line


def test_check_reports_faults_of_a_bot_that_raises(tmp_path, capsys):
    source = (
        '"""Fails on its third move of each game."""\n\nclass Bot:\n    moves = 0\n\n'
        "    def move(self, turn):\n        self.moves = self.moves + 1\n"
        '        if self.moves == 3:\n            raise ValueError("third move")\n' + PLAYS
    )
    path = write(tmp_path, "third.py", source)
    code, out, err = run(capsys, "check", path, "--games", "1")
    assert code == 1, out + err
    assert re.search(r"^  2 players: 1 game \(vs \w+\); places \d; 1 fault$", out, re.M), out
    assert "FAULT 4x exception: ValueError: third move (line 9)" in out
    assert out.splitlines()[-1] == f"{path}: NOT clean (4 faults)"
    report = json.loads(run(capsys, "check", path, "--games", "1", "--json")[1])
    assert {(f["kind"], f["players"]) for f in report["faults"]} == {("exception", n) for n in (2, 3, 4, 6)}


def test_check_stops_early_after_a_timeout(tmp_path, capsys):
    path = write(
        tmp_path,
        "loop.py",
        '"""Thinks forever."""\n\nclass Bot:\n    def move(self, turn):\n        while True:\n            pass\n',
    )
    code, out, err = run(capsys, "check", path)
    assert code == 1
    assert re.search(r"^  FAULT 1x timeout: .+ \(first in game 2p-1, seat 0, round 1\)$", out, re.M), out
    assert "  stopped early: a timeout in game 2p-1" in out
    assert "3 players" not in out


def test_check_of_a_missing_file_is_a_one_line_error(tmp_path, capsys):
    code, out, err = run(capsys, "check", tmp_path / "nope.py")
    assert code == 2 and err == f"arena: error: {tmp_path / 'nope.py'}: no such file\n"


def test_check_warns_about_a_missing_docstring(tmp_path, capsys):
    path = write(tmp_path, "quiet.py", "class Bot:\n    def move(self, turn):\n" + PLAYS)
    code, out, err = run(capsys, "check", path, "--games", "1")
    assert code == 0, out + err
    assert "  warning: no docstring" in out


# -- arena submit ---------------------------------------------------------------------


def test_submit_stores_the_bot_and_its_manifest(new_bot, tmp_path, capsys):
    folder = tmp_path / "submissions"
    code, out, err = run(capsys, "submit", new_bot, "--to", folder, "--author", "Ann Lee", "--games", "1")
    assert code == 0, out + err
    sha = hashlib.sha256(new_bot.read_bytes()).hexdigest()
    assert out.splitlines()[-1] == (
        f"submitted: {folder / 'mybot.py'} and {folder / 'mybot.json'} (sha256 {sha[:12]}, author Ann Lee)"
    )
    assert (folder / "mybot.py").read_bytes() == new_bot.read_bytes()
    manifest = json.loads((folder / "mybot.json").read_text())
    assert manifest["name"] == "mybot" and manifest["author"] == "Ann Lee" and manifest["sha256"] == sha
    assert manifest["description"].startswith("mybot: sheds its costliest cards")
    assert manifest["check"]["clean"] is True and manifest["check"]["sha256"] == sha
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", manifest["submitted"])


def test_submit_refuses_a_second_copy_and_a_name_clash(new_bot, tmp_path, capsys):
    folder = tmp_path / "submissions"
    assert run(capsys, "submit", new_bot, "--to", folder, "--games", "1")[0] == 0
    code, out, err = run(capsys, "submit", new_bot, "--to", folder)
    assert code == 1 and out == ""
    assert err == (
        f"arena: error: submission refused: {folder / 'mybot.py'} is this very file "
        f"(sha256 {hashlib.sha256(new_bot.read_bytes()).hexdigest()[:12]}); it was submitted already\n"
    )
    new_bot.write_text(new_bot.read_text() + "# version 2\n")
    code, out, err = run(capsys, "submit", new_bot, "--to", folder)
    assert code == 1 and "holds a different bot named 'mybot'; rename your bot (Bot.name) or use --replace" in err
    code, out, err = run(capsys, "submit", new_bot, "--to", folder, "--replace", "--games", "1")
    assert code == 0, err
    assert out.splitlines()[-1].startswith("replaced: ")
    manifest = json.loads((folder / "mybot.json").read_text())
    assert manifest["sha256"] == hashlib.sha256(new_bot.read_bytes()).hexdigest() and manifest["replaces"]


def test_submit_refuses_a_failing_bot_with_the_reasons(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BROKEN["import"][0])
    folder = tmp_path / "submissions"
    code, out, err = run(capsys, "submit", path, "--to", folder)
    assert code == 1
    assert err.startswith(f"arena: error: submission refused: the check failed: {path}:3: ")
    assert "'os'" in err and err.count("\n") == 1
    assert not folder.exists() or not any(folder.iterdir())


def test_a_servers_report_is_shown_as_arena_check_shows_its_own(tmp_path, capsys):
    """`arena submit --server` prints the server's check report through the same lines as
    `arena check`: 24 faults of two kinds are two FAULT lines with their counts (it printed one line
    a fault), tables say "1 game" and who sat; the local check of the same bot prints the same body."""
    from arena.authoring.check import report_lines
    from arena.cli.upload import report

    source = (
        '"""Fails on every third move."""\n\nclass Bot:\n    moves = 0\n\n'
        "    def move(self, turn):\n        self.moves = self.moves + 1\n"
        '        if self.moves % 3 == 0:\n            raise ValueError("third move")\n' + PLAYS
    )
    path = write(tmp_path, "third.py", source)
    code, out, err = run(capsys, "check", path, "--games", "1", "--json")
    checked = json.loads(out)
    assert len([f for f in checked["faults"] if f["kind"] != "retired"]) > 2
    report({"bot": "third", "version": 1, "status": "failed", "report": checked})
    shown = capsys.readouterr().out.splitlines()
    assert shown[1:] == list(report_lines(checked))
    faults = [line for line in shown if line.startswith("  FAULT ")]
    assert len(faults) == len({f["detail"] for f in checked["faults"] if f["kind"] != "retired"})
    assert all(re.match(r"  FAULT \d+x exception: ValueError: third move", line) for line in faults), faults
    assert any(re.match(r"  2 players: 1 game \(vs \w+\); places \d; \d+ faults?$", line) for line in shown), shown


# -- arena rules ----------------------------------------------------------------------


def test_rules_default(capsys):
    code, out, err = run(capsys, "rules")
    assert code == 0
    assert out.startswith("Yard bridge, variant 'contest' (the contest rules)")
    assert "exceeds 125 (or after 200 rounds)" in out and "*" not in out
    assert len(out.splitlines()) < 40  # fits a terminal


def test_rules_marks_a_changed_knob(capsys):
    code, out, err = run(capsys, "rules", "--rule", "limit=101", "--rule", "burn=off")
    assert code == 0
    assert "(changed: burn, limit)" in out.splitlines()[0]
    assert "exceeds 101 *" in out and "no burn *" in out


def test_rules_list_and_json(capsys):
    code, out, err = run(capsys, "rules", "--list")
    assert code == 0
    listed = dict(line.split(None, 1) for line in out.splitlines())
    assert listed["contest"] == "the contest rules" and listed["no-burn"] == "burn=None"
    code, out, err = run(capsys, "rules", "--variant", "jack-finish", "--json")
    assert code == 0 and json.loads(out)["jack_finish"] == 20


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rule", "limit=abc"], "limit takes a whole number, not 'abc'"),
        (["--rule", "colour=red"], "unknown rule setting 'colour'"),
        (["--rule", "limit"], "is not KEY=VALUE"),
        (["--variant", "chess"], "unknown variant 'chess'"),
    ],
)
def test_rules_bad_setting_is_a_one_line_error(capsys, argv, message):
    code, out, err = run(capsys, "rules", *argv)
    assert code == 2 and out == ""
    assert err.startswith("arena: error: ") and message in err and err.count("\n") == 1
