"""``arena verify``: an organiser's audit of records, on real records and tampered ones.

The checker itself (arena.verify, independent of the engine) is tested rule by rule in
test_independent_checker.py; here: the command's verdict lines, summary, exit status and
JSON, and that no record, however damaged or hostile, stops the command or reaches the
terminal raw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import one_line_error, run, run_process


def play_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], games: int = 3, name: str = "g.jsonl", *bots: str
) -> Path:
    path = tmp_path / name
    code, _, err = run(
        capsys,
        "play",
        *(bots or ("greedy", "random")),
        "--games",
        str(games),
        "--seed",
        "4",
        "-q",
        "--replay",
        str(path),
    )
    assert code == 0, err
    return path


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(path: Path, events: list[Any]) -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events))
    return path


def game_slices(events: list[dict[str, Any]]) -> list[tuple[int, int]]:
    starts = [i for i, e in enumerate(events) if e["event"] == "game"]
    return list(zip(starts, starts[1:] + [len(events)], strict=True))


def test_good_records_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = play_record(tmp_path, capsys, 3, "g.jsonl", "greedy", "random", "heuristic")
    code, out, err = run(capsys, "verify", str(path))
    assert code == 0 and err == ""
    events = lines_of(path)
    expected = [f"game {g}: OK ({b - a} lines)" for g, (a, b) in zip((1, 2, 3), game_slices(events), strict=True)]
    assert out.splitlines() == expected + ["3 games: 3 OK, 0 FAIL"]


def test_tournament_replays_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "replays"
    code, _, err = run(
        capsys,
        "tournament",
        "greedy",
        "random",
        "heuristic",
        "-n",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(tmp_path / "t.sqlite"),
        "--replays",
        str(folder),
    )
    assert code == 0, err
    files = sorted(str(p) for p in folder.glob("*.jsonl"))
    code, out, _ = run(capsys, "verify", *files)
    assert code == 0 and out.splitlines()[-1] == "3 games in 3 files: 3 OK, 0 FAIL"


def tamper_put(events: list[dict[str, Any]], game: int) -> int:
    """Replace a non-opening put of game ``game`` (1-based) by a card the mover does not hold; its line."""
    a, b = game_slices(events)[game - 1]
    for i in range(a, b):
        e = events[i]
        if e["event"] == "put" and not e.get("opening"):
            deal = next(events[j] for j in range(i, a, -1) if events[j]["event"] == "deal")
            e["card"] = deal["stock"][-1]  # the bottom of the stock: nobody has drawn it yet
            return i + 1
    raise AssertionError("no put to tamper with")


def test_a_tampered_game_fails_with_its_first_disagreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = lines_of(play_record(tmp_path, capsys))
    line = tamper_put(events, 2)
    path = write(tmp_path / "t.jsonl", events)
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("game 1: OK") and lines[2].startswith("game 3: OK")
    assert lines[1].startswith(f"game 2: FAIL line {line}: R4 seat ") and "not in their hand" in lines[1]
    assert lines[-1] == "3 games: 2 OK, 1 FAIL"


@pytest.mark.parametrize(
    "tamper, rule",
    [
        (lambda ev: next(e for e in ev if e["event"] == "round")["scores"].__setitem__(0, 999), "R8.2"),
        (lambda ev: next(e for e in ev if e["event"] == "end")["places"].reverse(), "R9.1"),
        (lambda ev: next(e for e in ev if e["event"] == "deal")["hands"][0].pop(), "R3.1"),
        (lambda ev: ev.remove(next(e for e in ev if e["event"] == "finish")), ""),
    ],
)
def test_each_kind_of_tampering_fails(
    tamper: Any, rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = lines_of(play_record(tmp_path, capsys, 1))
    tamper(events)
    code, out, _ = run(capsys, "verify", str(write(tmp_path / "t.jsonl", events)))
    assert code == 1 and out.splitlines()[0].startswith("game 1: FAIL line ") and f" {rule}" in out.splitlines()[0]
    assert out.splitlines()[-1] == "1 game: 0 OK, 1 FAIL"


def test_json_lists_every_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = lines_of(play_record(tmp_path, capsys))
    line = tamper_put(events, 3)
    path = write(tmp_path / "t.jsonl", events)
    code, out, _ = run(capsys, "verify", "--json", str(path))
    doc = json.loads(out)
    assert code == 1 and doc["passed"] is False and (doc["games"], doc["ok"], doc["failed"]) == (3, 2, 1)
    (report,) = doc["files"]
    assert report["file"] == str(path) and [g["ok"] for g in report["games"]] == [True, True, False]
    bad = report["games"][2]
    assert bad["game"] == "3" and bad["errors"][0].startswith(f"game 3 line {line}: R4 ")
    assert run(capsys, "verify", "--json", str(play_record(tmp_path, capsys, 1, "ok.jsonl")))[0] == 0


def test_damaged_and_hostile_lines_fail_their_game_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = lines_of(play_record(tmp_path, capsys, 3))
    (a1, b1), (a2, b2), (a3, b3) = game_slices(events)
    events[a1]["game"] = "\x1b]52;c;aGk=\x07\x1b[2J\u202eevil"  # a terminal payload as the game id
    events[a1]["rules"]["limit"] = "lots"  # a rule of the wrong type
    rows: list[Any] = events[:b1]
    rows += events[a2 : a2 + 3] + ["{not json", "[" * 100_000 + "]" * 100_000] + events[a2 + 3 : b2]
    third = events[a3:b3]
    third[1] = {"event": "deal", "round": 1, "first": 0, "hands": {"a": 1}, "stock": 7, "scores": None}
    path = write(tmp_path / "h.jsonl", rows + third)
    with open(path, "ab") as f:
        f.write(b"\xff\xfe not utf-8\n")
    code, out, err = run(capsys, "verify", str(path))
    assert code == 1 and err == "" and "Traceback" not in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    lines = out.splitlines()
    assert lines[0].startswith("game \\x1b]52;c;aGk=\\x07\\x1b[2J\\u202eevil: FAIL line 1: format rules.limit")
    assert lines[1].startswith(f"game 2: FAIL line {b1 + 4}: format not JSON")
    assert lines[2].startswith("game 3: FAIL line ") and " R3.1 deal needs 2 hands" in lines[2]
    assert lines[-1] == "3 games: 0 OK, 3 FAIL"


def test_lines_outside_any_game_and_empty_files_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = play_record(tmp_path, capsys, 1)
    stray = write(tmp_path / "stray.jsonl", [{"event": "say", "seat": 0, "text": "hi"}, *lines_of(good)])
    code, out, _ = run(capsys, "verify", str(stray))
    assert code == 1 and out.splitlines()[0].startswith("lines 1.. before the first game line: FAIL line 1: format say")
    assert out.splitlines()[1].startswith("game 1: OK")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    code, out, _ = run(capsys, "verify", str(empty), str(good))
    assert code == 1 and out.splitlines()[0] == f"{empty}: FAIL no game in this file"
    assert out.splitlines()[1].startswith(f"{good}: game 1: OK")
    assert out.splitlines()[-1] == "1 game in 2 files: 1 OK, 0 FAIL; and a file with no game"


def test_bad_paths_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line_error(*run(capsys, "verify", str(tmp_path / "gone.jsonl")), "gone.jsonl", "no such file")
    one_line_error(*run(capsys, "verify", str(tmp_path)), "is a folder")


def test_the_real_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = play_record(tmp_path, capsys, 2)
    done = run_process("verify", str(path))
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "2 games: 2 OK, 0 FAIL" and done.stderr == ""
    events = lines_of(path)
    tamper_put(events, 1)
    done = run_process("verify", str(write(tmp_path / "t.jsonl", events)))
    assert done.returncode == 1 and done.stdout.splitlines()[-1] == "2 games: 1 OK, 1 FAIL"


def test_lines_before_the_first_game_keep_a_bounded_number_of_errors() -> None:
    """A long run of lines before any game line is counted, not kept line by line."""
    from arena.verify.check import MAX_STRAY_ERRORS, verify_lines

    verdicts = verify_lines([{"event": "say", "seat": 0, "text": "x"}] * 5000)
    (outside,) = verdicts
    assert outside.outside and outside.lines == 5000
    assert len(outside.errors) == MAX_STRAY_ERRORS and outside.dropped == 5000 - MAX_STRAY_ERRORS
    assert outside.to_dict()["dropped"] == 5000 - MAX_STRAY_ERRORS
