"""Every reader of game records survives any input (issue 17): ``arena replay``, ``arena view``
and ``arena verify`` on real records mutated at random (bytes, JSON values, nesting, numbers,
lines), seeded and bounded. Each run ends with exit 0, or one line naming the file and what is
wrong with a non-zero exit; never a traceback, never a file left behind but the page view wrote."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_here as run

from arena.cli import main

#: Values put where a field's value was: every JSON type, and the hostile ones.
HOSTILE: list[Any] = [
    "x",
    "",
    -1,
    7,
    10**6,
    2**70,
    -(2**64),
    3.5,
    None,
    True,
    [],
    {},
    [1, 2, 3],
    {"seat": 0},
    "\ud800",
    "\x00",
    "\x1b]52;c;aGk=\x07",
    "10x",
    "jd",
    ["jd"] * 40,
    list(range(1000)),
]
#: Number texts put where a number was in the raw line.
NUMBERS = ["1e999999", "-1e999999", "NaN", "Infinity", "9" * 5000, "-0", "1.5", "18446744073709551616"]
#: Bytes inserted into the raw file.
BYTES = [b"\x00", b"\xff", b"\xed\xa0\x80", b"\xc3", b"{", b'"', b"\n", b"]", b"\\u", b"\r"]


@pytest.fixture(scope="module")
def record_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """A real record of a 3-seat game and a 2-seat game, made once, as raw lines."""
    folder = tmp_path_factory.mktemp("records")
    lines: list[bytes] = []
    for bots, games in ((("greedy", "heuristic", "random"), "1"), (("random", "greedy"), "1")):
        path = folder / f"{len(bots)}.jsonl"
        code, _, err = run("play", *bots, "--games", games, "--seed", "3", "-q", "--replay", str(path))
        assert code == 0, err
        lines += path.read_bytes().splitlines(keepends=True)
    return lines


def paths_in(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value, as a path of keys and indexes."""
    found = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths_in(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths_in(v, (*path, i))
    return found


def set_at(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = set_at(value[path[0]], path[1:], new)
    return value


def mutate(lines: list[bytes], rng: random.Random) -> bytes:
    """One random damage to a record: the kinds a hostile or broken file holds."""
    lines = list(lines)
    i = rng.randrange(len(lines))
    kind = rng.choice(["value", "value", "delete", "unknown", "number", "nest", "bytes", "truncate", "lines"])
    if kind in ("value", "delete", "unknown"):
        event = json.loads(lines[i])
        places = paths_in(event)
        place = rng.choice(places[1:])
        if kind == "value":
            event = set_at(event, place, rng.choice(HOSTILE))
        elif kind == "delete":
            parent = event
            for key in place[:-1]:
                parent = parent[key]
            del parent[place[-1]]
        else:
            event[rng.choice(["extra", "event", "seat"])] = rng.choice(["???", "game", 12, {"a": [[[]]]}])
        lines[i] = json.dumps(event).encode("utf-8", "surrogatepass") + b"\n"
    elif kind == "number":
        digits = [k for k, c in enumerate(lines[i]) if chr(c).isdigit()]
        k = rng.choice(digits)
        lines[i] = lines[i][:k] + rng.choice(NUMBERS).encode() + lines[i][k + 1 :]
    elif kind == "nest":
        depth = rng.choice([10, 900, 5000, 100_000])
        event = lines[i].rstrip(b"\n")
        k = event.index(b":") + 1  # the first field's value, wrapped in lists
        lines[i] = event[:k] + b"[" * depth + event[k:-1] + b"]" * depth + b"}\n"
    elif kind == "bytes":
        k = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:k] + rng.choice(BYTES) + lines[i][k + rng.randrange(2) :]
    elif kind == "truncate":
        return b"".join(lines)[: rng.randrange(1, sum(map(len, lines)))]
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = rng.choice([(lines[j], lines[i]), (lines[i], lines[i]), (b"", lines[j])])
    return b"".join(lines)


def assert_one_line_error(code: int, err: str, name: str) -> None:
    assert code != 0
    assert len(err.splitlines()) == 1 and err.startswith("arena: error: ") and name in err, err
    assert "Traceback" not in err


def check_readers(folder: Path, data: bytes) -> tuple[int, int, int]:
    """Replay, view and verify one record; the exit statuses."""
    record = folder / "r.jsonl"
    record.write_bytes(data)
    page = folder / "r.html"
    codes = []
    for argv in (["replay", str(record)], ["view", str(record), "--out", str(page)]):
        code, out, err = run(*argv)
        if code == 0:
            assert err == "" and out
        else:
            assert_one_line_error(code, err, "r.jsonl")
            assert "\x1b" not in err and "\x00" not in err
        codes.append(code)
    assert (codes[1] == 0) == page.exists()  # a page only from a run that succeeded
    code, out, err = run("verify", str(record))
    if code == 2:
        assert_one_line_error(code, err, "r.jsonl")
    else:
        assert code in (0, 1) and err == "" and out.splitlines()[-1].endswith(("FAIL", "game"))
    codes.append(code)
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted(["r.jsonl"] + (["r.html"] if codes[1] == 0 else [])), left
    page.unlink(missing_ok=True)
    return codes[0], codes[1], codes[2]


def test_the_unchanged_record_reads_everywhere(record_lines: list[bytes], tmp_path: Path) -> None:
    assert check_readers(tmp_path, b"".join(record_lines)) == (0, 0, 0)


@pytest.mark.parametrize("seed", range(3))
def test_mutated_records_end_in_a_result_or_one_line(record_lines: list[bytes], tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    outcomes = []
    for case in range(22):
        folder = tmp_path / str(case)
        folder.mkdir()
        outcomes.append(check_readers(folder, mutate(record_lines, rng)))
    # The mutations reach both ends: some damage is refused, and some records still read.
    assert any(o[0] != 0 for o in outcomes) and any(o[2] != 0 for o in outcomes)


# -- targeted hostile records -------------------------------------------------------------------


def events_of(lines: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def write_events(path: Path, events: list[Any]) -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events))
    return path


def refused_everywhere(path: Path, *needles: str) -> None:
    """replay and view refuse ``path`` in one line naming it and saying what is wrong; no page."""
    page = path.with_suffix(".html")
    for argv in (["replay", str(path)], ["view", str(path), "--out", str(page)]):
        code, out, err = run(*argv)
        assert_one_line_error(code, err, path.name)
        assert all(n in err for n in needles), err
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@pytest.mark.parametrize(
    "line, needles",
    [
        ("[" * 100_000 + "]" * 100_000, [":2: ", "a line longer than 65536 bytes"]),
        ("[" * 30_000 + "]" * 30_000, [":2: ", "nested too deeply"]),
        ('{"event": "say", "seat": 0, "text": "' + "x" * 70_000 + '"}', [":2: ", "longer than 65536"]),
        ('{"event": "say", "seat": 0, "text": ' + "[" * 900 + "]" * 900 + "}", [":2: ", "say text must be text"]),
        ('{"event": "skip", "seat": 1e999999}', [":2: ", "skip seat must be a seat 0 to 2, not inf"]),
        ('{"event": "skip", "seat": ' + "9" * 100_00 + "}", [":2: ", "too many digits"]),
        ('{"event": "skip", "seat": 99}', [":2: ", "seat 0 to 2, not 99"]),
        ('{"event": "skip", "seat": -1}', [":2: ", "not -1"]),
        ('{"event": "skip", "seat": "0"}', [":2: ", "not '0'"]),
        ('{"event": "skip", "seat": true}', [":2: ", "not true"]),
        ('{"event": "put", "seat": 0, "card": ["jd"]}', [":2: ", "put card must be a card", "a list"]),
        ('{"event": "deal", "round": 1, "first": 0, "hands": [[], []], "stock": [], "scores": [0, 0, 0]}', ["hands"]),
        ('{"event": "launch", "seat": 0}', [":2: ", "unknown event 'launch'"]),
        ('{"event": "skip"}', [":2: ", "needs 'seat'"]),
        ('{"event": "skip", "seat": 0', [":2: ", "not JSON"]),
        ('{"event": "skip", "seat": 0}\x00', [":2: ", "not JSON"]),
        ("[1, 2]", [":2: ", "JSON object with an 'event'"]),
    ],
)
def test_a_hostile_line_is_refused_in_one_line_naming_it(
    record_lines: list[bytes], tmp_path: Path, line: str, needles: list[str]
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(record_lines[0] + line.encode() + b"\n" + b"".join(record_lines[1:]))
    refused_everywhere(path, *needles)
    code, out, err = run("verify", str(path))  # the independent checker judges on its own: never a traceback
    assert code in (0, 1) and err == "" and out.splitlines()[-1].startswith("2 games: ")


def test_every_field_of_every_event_is_checked(record_lines: list[bytes], tmp_path: Path) -> None:
    """A wrong value in any documented field of any event kind is a one-line error naming it."""
    from arena.records.files import RecordError, read_games
    from arena.records.shape import EVENT_FIELDS

    events = events_of(record_lines)
    samples = {e["event"]: e for e in events[: events.index(next(e for e in events if e["event"] == "end")) + 1]}
    samples["put"] = {"event": "put", "seat": 0, "card": "jd", "suit": "h", "opening": True}
    samples["fault"] = {"event": "fault", "seat": 1, "kind": "crash", "detail": "gone"}
    samples["say"] = {"event": "say", "seat": 2, "text": "hi", "output": True, "capped": True}
    header = samples.pop("game")
    assert set(samples) == set(EVENT_FIELDS)
    path = tmp_path / "t.jsonl"
    write_events(path, [header, *samples.values()])
    assert len(next(read_games(path))) == len(samples) + 1  # the samples themselves are good
    for kind, event in samples.items():
        assert set(event) - {"event"} == set(EVENT_FIELDS[kind])
        for field in EVENT_FIELDS[kind]:
            for bad in ({"x": 1}, 5 if field in ("text", "kind", "detail") else "x", -1, None):
                if bad is None and field == "winner":
                    continue  # null: the move guard ended the round
                write_events(path, [header, {**event, field: bad}])
                with pytest.raises(RecordError, match=rf"^{path}:2: {kind} {field}"):
                    list(read_games(path))


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"players": [{"seat": i, "name": "b", "bot": "b"} for i in range(7)]}, "2 to 6 seats (R2.1)"),
        ({"players": "many"}, "players must be a list"),
        ({"version": 2}, "version must be 1"),
        ({"seed": "5"}, "seed must be a whole number"),
        ({"seed": 2**300}, "seed must be a whole number below 2**256, not a number of 91 digits"),
        ({"game": ["1"]}, "game game must be text"),
        ({"rules": {"name": "x", "limit": [1]}}, "'limit' must be a number"),
        ({"rules": {"name": "x", "points": {"z": 1}}}, "points must map ranks"),
        ({"rules": {"limit": 5}}, "needs the variant's 'name'"),
    ],
)
def test_a_hostile_game_line_is_refused(record_lines: list[bytes], tmp_path: Path, change: Any, needle: str) -> None:
    events = events_of(record_lines)
    path = write_events(tmp_path / "g.jsonl", [{**events[0], **change}, *events[1:]])
    refused_everywhere(path, ":1: ", needle)


def test_a_player_in_the_wrong_place_is_refused(record_lines: list[bytes], tmp_path: Path) -> None:
    events = events_of(record_lines)
    events[0]["players"][1]["seat"] = 0
    refused_everywhere(write_events(tmp_path / "p.jsonl", events), ":1: ", "players[1] seat must be 1")


def test_lone_surrogates_and_controls_are_shown_escaped(record_lines: list[bytes], tmp_path: Path) -> None:
    events = events_of(record_lines)
    events[0]["players"][0]["name"] = "\ud800\x1b[2Jevil"
    events.insert(2, {"event": "say", "seat": 0, "text": "\udcff\x00", "unknown_field_x": [[[]]] * 3})
    path = write_events(tmp_path / "s.jsonl", events)
    code, out, err = run("replay", str(path))
    assert code == 0 and err == "" and "\\ud800\\x1b[2Jevil#0" in out and "\x1b" not in out
    code, out, err = run("view", str(path), "--out", str(tmp_path / "s.html"))
    assert code == 0 and err == ""
    page = (tmp_path / "s.html").read_bytes().decode("utf-8")  # valid UTF-8: no surrogate reached the file
    # the name's escape shown as text; unknown fields dropped
    assert "\\\\ud800" in page and "unknown_field_x" not in page


def test_bad_bytes_and_a_truncated_end_name_their_line(record_lines: list[bytes], tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_bytes(b"".join(record_lines[:3]) + b'{"event": "skip", "seat": 0, "x": "\xff"}\n')
    refused_everywhere(path, "b.jsonl:4: ", "not UTF-8 text (byte 0xff at column 36)")
    path.write_bytes(b"".join(record_lines)[:-20])
    refused_everywhere(path, f"b.jsonl:{len(record_lines)}: ", "not JSON")


def test_a_game_past_the_size_limit_is_refused(
    record_lines: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.records.files

    monkeypatch.setattr(arena.records.files, "MAX_GAME_BYTES", 4000)
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(record_lines))
    refused_everywhere(path, "a game longer than 4000 bytes")
    path.write_bytes(record_lines[0] + b"\n" * 5000)  # blank lines count: an endless stream of them ends too
    refused_everywhere(path, "a game longer than 4000 bytes")


def test_a_page_holds_at_most_its_limit_of_games(
    record_lines: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.web.view

    monkeypatch.setattr(arena.web.view, "MAX_PAGE_GAMES", 1)
    events = events_of(record_lines)
    [e for e in events if e["event"] == "game"][1]["game"] = "2"
    path = write_events(tmp_path / "two.jsonl", events)
    code, out, err = run("view", str(path))
    assert_one_line_error(code, err, "two.jsonl")
    assert "more than a page holds" in err and "--game ID" in err and not path.with_suffix(".html").exists()
    code, out, err = run("view", str(path), "--game", "1", "--out", str(tmp_path / "one.html"))
    assert code == 0 and out.startswith("wrote ") and "(1 game)" in out


def test_a_closed_stdout_ends_replay_quietly(record_lines: list[bytes], tmp_path: Path, monkeypatch) -> None:
    import os

    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(record_lines) * 20)
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `| head` does once it has its lines
    stdout = open(write_end, "w", encoding="utf-8")
    monkeypatch.setattr("sys.stdout", stdout)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["replay", str(path)])
    monkeypatch.undo()
    with contextlib.suppress(OSError):
        stdout.close()
    assert code == 141 and err.getvalue() == ""


def test_view_to_a_closed_stdout_ends_instead_of_hanging(record_lines: list[bytes], tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(record_lines) * 3)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "view", str(path), "--out", "/dev/stdout"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(15)
    proc.stdout.close()  # as `| head -c 15` does
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("arena view --out /dev/stdout hung")
    assert head == b"<!DOCTYPE html>" and proc.returncode == 141 and proc.stderr.read() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]


def test_view_writes_a_pipe_as_it_is_and_refuses_one_nobody_reads(record_lines: list[bytes], tmp_path: Path) -> None:
    import os
    import threading

    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(record_lines))
    fifo = tmp_path / "page.fifo"
    os.mkfifo(fifo)
    code, out, err = run("view", str(path), "--out", str(fifo))
    assert_one_line_error(code, err, "page.fifo")
    assert "nobody reads" in err and out == ""
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        for _ in range(200):  # wait for the reader to open its end (bounded)
            code, out, err = run("view", str(path), "--out", str(fifo))
            if code == 0:
                break
    finally:
        if reader.is_alive() and not got:
            with contextlib.suppress(OSError), open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass  # let a reader that never got a writer finish
        reader.join(timeout=30)
    assert code == 0 and out == "" and got and got[0].rstrip().endswith(b"</html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.fifo", "r.jsonl"]


def test_view_never_overwrites_a_temporary_name_and_leaves_none_on_failure(
    record_lines: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(record_lines))
    theirs = tmp_path / "r.html.tmp"  # the name the page's temporary file once had
    theirs.write_text("someone else's")
    code, _, err = run("view", str(path))
    assert code == 0 and err == "" and theirs.read_text() == "someone else's"

    def broken(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("arena.web.view.os.replace", broken)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run("view", str(path))
    assert_one_line_error(code, err, "r.html")
    assert "No space left on device" in err and sorted(p.name for p in tmp_path.iterdir()) == before


def test_verify_calls_a_database_or_binary_not_a_record(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "x.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("create table t (a)")
        conn.executemany("insert into t values (?)", [("row\n" * 3,)] * 2000)
        conn.commit()
    blob = tmp_path / "z.bin"
    blob.write_bytes(random.Random(1).randbytes(300_000))
    for path in (db, blob):
        for argv in (["verify", str(path)], ["verify", "--json", str(path)]):
            code, out, err = run(*argv)
            assert_one_line_error(code, err, path.name)
            assert "not a game record" in err and out == ""


def test_verify_bounds_a_line_and_never_waits_for_a_pipe(record_lines: list[bytes], tmp_path: Path) -> None:
    import os

    path = tmp_path / "long.jsonl"
    path.write_bytes(record_lines[0] + b'{"event": "say", "text": "' + b"x" * 300_000 + b'"}\n')
    code, out, err = run("verify", str(path))
    assert code == 1 and err == "" and "line 2: format a line longer than 65536 bytes" in out
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    for argv in (["verify", str(fifo)], ["replay", str(fifo)], ["view", str(fifo), "--out", str(tmp_path / "f.html")]):
        code, out, err = run(*argv)  # no writer: read as an empty file, at once
        assert code != 0 and ("no game" in out or "no game" in err)


def test_the_shape_check_knows_exactly_the_fields_of_arena_events() -> None:
    from typing import get_args, get_type_hints

    from arena.game.events import Event
    from arena.records.shape import EVENT_FIELDS

    types = {get_args(get_type_hints(t)["event"])[0]: t for t in get_args(Event)}
    assert set(types) == set(EVENT_FIELDS) | {"game"}
    for name, spec in EVENT_FIELDS.items():
        assert set(spec) == set(types[name].__annotations__) - {"event"}, name
        assert {f for f, (_, required) in spec.items() if required} == types[name].__required_keys__ - {"event"}, name


def test_view_never_writes_through_a_link(record_lines: list[bytes], tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(record_lines))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "dangling.html").symlink_to(elsewhere / "new.html")
    (tmp_path / "foreign.html").symlink_to(path)
    for name in ("dangling.html", "foreign.html"):
        code, _, err = run("view", str(path), "--out", str(tmp_path / name))
        assert_one_line_error(code, err, name)
        assert "not written by arena" in err
    assert list(elsewhere.iterdir()) == [] and path.read_bytes() == b"".join(record_lines)
    from arena.web.view import write_page

    write_page(tmp_path / "foreign.html", "<p>page</p>", mine=True)  # a report folder's own name
    assert (tmp_path / "foreign.html").read_text() == "<p>page</p>" and not (tmp_path / "foreign.html").is_symlink()
    assert path.read_bytes() == b"".join(record_lines)
