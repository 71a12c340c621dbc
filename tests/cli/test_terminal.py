"""Everything arena prints is terminal-safe (arena/cli/terminal.py): the red team's second
round found a record file's name in `arena view`'s "wrote ..." line and bot file names in an
interrupted tournament's "resume with" hint printed raw; the class is closed where all
output passes, and these tests attack it through the commands."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support.cli import run

from arena.cli.terminal import SafeStream, safe_text

HOSTILE = "x\x1b]0;PWNED\x07\x1b[31mRED\u202e\x9b2J"


def printable(text: str) -> bool:
    return all(line.isprintable() for line in text.replace("\r", "\n").splitlines())


def test_safe_text_keeps_line_ends_and_progress_returns() -> None:
    assert safe_text("plain text, ♣ and ♥\n") == "plain text, ♣ and ♥\n"
    assert safe_text("\r 40%|####  |\r 80%") == "\r 40%|####  |\r 80%"
    shown = safe_text(f"wrote {HOSTILE}.html\n")
    assert shown.endswith("\n") and printable(shown) and "\\x1b]0;PWNED\\x07" in shown
    out = io.StringIO()
    stream = SafeStream(out)
    assert stream.write(HOSTILE) == len(HOSTILE)
    stream.writelines(["a\x1b", "b\n"])
    assert out.getvalue() == safe_text(HOSTILE) + "a\\x1bb\n" and stream.getvalue() == out.getvalue()


def test_view_prints_a_hostile_record_file_name_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "g.jsonl"
    code, _, err = run(capsys, "play", "greedy", "random", "-n", "1", "-q", "--replay", str(record))
    assert code == 0, err
    hostile = tmp_path / f"game{HOSTILE}.jsonl"
    record.rename(hostile)
    code, out, err = run(capsys, "view", str(hostile))
    assert code == 0, err
    assert "wrote" in out and printable(out + err), out


def test_every_command_line_echo_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A bad option naming a hostile file: argparse and arena's own errors both go through the stream.
    code, out, err = run(capsys, "replay", str(tmp_path / f"missing{HOSTILE}.jsonl"))
    assert code == 2 and printable(out + err), err
    code, out, err = run(capsys, "play", "greedy", f"--nonsense{HOSTILE}")
    assert code == 2 and printable(out + err), err
