"""No input file can stop a command: every bot file, however deep, long or malformed its
text and its names, gives a one-line load error (``check``, ``play``) or is entered and
loses as crashed (``tournament``, and every resume); names shown are clean, reference bot
names are reserved, and nothing a contestant wrote reaches a terminal raw."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import MappingProxyType

import pytest
from support.cli import run_process

from arena.errors import BotLoadError
from arena.game.referee import GameInfo
from arena.game.rules import CONTEST
from arena.playing.human import HumanPlayer
from arena.playing.match import entrant_labels
from arena.trust.botsource import MAX_NESTING, MAX_SOURCE_BYTES, BotSource, parse_source, read_bot_file
from arena.trust.text import clean_name, escape

ROOT = Path(__file__).resolve().parents[2]
GREEDY = (ROOT / "bots" / "greedy.py").read_text()
MOVE = "class Bot:\n    def move(self, turn):\n        turn.finish()\n"

#: Payloads a terminal would act on: OSC 52 clipboard write, CSI clear/colour/cursor, OSC 8 link,
#: C1 CSI, bidi override and isolate, a newline that forges a log line, a lone surrogate.
PAYLOAD = (
    "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31m\x1b]8;;http://x/\x07\x9b1A\u202e\u2066\n  greedy: forged\r\x7f\udcff"
)


def poison_files() -> dict[str, bytes]:
    """One file per way bot text can break a parser, a compiler or a printer."""
    return {
        "unary.py": ("class Bot:\n    def move(self, turn):\n        x = " + "-" * 400 + "1\n").encode(),
        "unary_long.py": ("class Bot:\n    def move(self, turn):\n        x = " + "-" * 100_000 + "1\n").encode(),
        "chain.py": ("x = 1" + "+1" * 60_000 + "\n" + MOVE).encode(),
        "elif.py": (
            "class Bot:\n    def move(self, turn):\n        if turn:\n            pass\n"
            + "".join(f"        elif {i}:\n            pass\n" for i in range(400))
        ).encode(),
        "lists.py": ("x = " + "[" * 5000 + "]" * 5000 + "\n" + MOVE).encode(),
        "calls.py": ("x = " + "f(" * 150 + ")" * 150 + "\n" + MOVE).encode(),
        "bigint.py": ("x = " + "9" * 100_000 + "\n" + MOVE).encode(),
        "huge.py": (MOVE + "s = '" + "a" * (MAX_SOURCE_BYTES + 10) + "'\n").encode(),
        "nul.py": MOVE.encode().replace(b"turn)", b"turn)\x00"),
        "latin1.py": b"class Bot:\n    name = '\xe9t\xe9'\n    def move(self, turn):\n        pass\n",
        "surrogate_bytes.py": b"class Bot:\n    name = '\xed\xb3\xbf'\n    def move(self, turn):\n        pass\n",
        "bidi.py": (
            "class Bot:\n    def move(self, turn):\n        x = 1 # \u202e } \u2066 if x: return\u2069\n"
        ).encode(),
        "escape.py": b"class Bot:\n    def move(self, turn):\n        x = '\x1b]52;c;aGk=\x07'\n",
        "empty.py": b"",
        "binary.py": bytes(range(256)) * 4,
    }


@pytest.fixture(scope="module")
def poison(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("poison")
    for name, data in poison_files().items():
        (folder / name).write_bytes(data)
    return folder


def arena(*argv: str, cwd: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """``arena ARGV`` as a process, its output as bytes (a poisoned file may make anything of it)."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return run_process(*argv, timeout=timeout, cwd=cwd, env=env, text=False)


def assert_one_line_error(done: subprocess.CompletedProcess, code: int = 2) -> str:
    err = done.stderr.decode("utf-8")
    assert done.returncode == code, (done.returncode, err[-2000:])
    assert "Traceback" not in err and "Traceback" not in done.stdout.decode("utf-8", "replace")
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), err
    assert lines[0].isprintable()
    return lines[0]


def terminal_safe(data: bytes) -> bool:
    """No escape sequence, C1 control, bidi control or undecodable byte in what was printed."""
    text = data.decode("utf-8")  # strict: a lone surrogate or raw byte would fail here
    return all(line.isprintable() for line in text.splitlines()) and "\r" not in text


# -- parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(poison_files()))
def test_every_poison_file_gives_one_line_load_error(poison: Path, name: str) -> None:
    if name == "empty.py":
        pytest.skip("an empty file parses; it has no Bot (checked by the policy, below)")
    with pytest.raises(BotLoadError) as info:
        src = read_bot_file(poison / name)
        parse_source(src.source, src.label)
    text = str(info.value)
    assert "\n" not in text and len(text) < 400 and text.isprintable(), text


def test_the_nesting_limit_leaves_room_for_ordinary_code() -> None:
    chain = "".join(f"        elif x == {i}:\n            pass\n" for i in range(MAX_NESTING - 20))
    parse_source("class Bot:\n    def move(self, turn):\n        x = 1\n        if x:\n            pass\n" + chain)
    with pytest.raises(BotLoadError, match="nested more than"):
        parse_source("x = " + "-" * (MAX_NESTING + 5) + "1\n")


def test_source_with_a_lone_surrogate_or_null_is_refused_by_line() -> None:
    with pytest.raises(BotLoadError, match="lone surrogate") as info:
        parse_source("x = 1\ny = '\udcff'\n")
    assert info.value.line == 2
    with pytest.raises(BotLoadError, match="null byte"):
        parse_source("x = 1\x00\n")


def test_a_huge_file_is_read_only_up_to_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of nulls, never read whole
    src = read_bot_file(big, lenient=True)
    assert src.problem and "67108864 bytes" in src.problem
    assert len(src.source) <= MAX_SOURCE_BYTES + 1
    with pytest.raises(BotLoadError, match="the limit is"):
        read_bot_file(big)


def test_a_fifo_or_device_in_place_of_a_bot_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(BotLoadError, match="not a regular file"):
            read_bot_file(path, lenient=True)
    assert_one_line_error(arena("play", str(fifo), "greedy", "-n", "1", "-q", timeout=60))


def test_lenient_read_enters_an_unreadable_file_with_its_problem(poison: Path) -> None:
    src = read_bot_file(poison / "latin1.py", lenient=True)
    assert src.name == "latin1" and src.problem == "not UTF-8 text (byte 0xe9 on line 2)"
    assert src.sha256 == __import__("hashlib").sha256((poison / "latin1.py").read_bytes()).hexdigest()


# -- the commands ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["unary_long.py", "chain.py", "elif.py", "latin1.py", "nul.py", "huge.py", "bidi.py", "bigint.py"]
)
def test_play_and_check_refuse_a_poison_file_in_one_line(poison: Path, name: str) -> None:
    line = assert_one_line_error(arena("play", str(poison / name), "greedy", "-n", "1", "-q"))
    assert name in line
    assert_one_line_error(arena("play", "--trusted", str(poison / name), "greedy", "-n", "1", "-q"))
    done = arena("check", str(poison / name))
    assert done.returncode == 1 and b"Traceback" not in done.stderr + done.stdout
    assert b"PROBLEM" in done.stdout and terminal_safe(done.stdout), done.stdout[-500:]


def test_a_tournament_over_a_poisoned_folder_completes_and_resumes(poison: Path, tmp_path: Path) -> None:
    folder = tmp_path / "entries"
    folder.mkdir()
    for name in ("chain.py", "latin1.py", "huge.py", "nul.py", "bidi.py"):
        (folder / name).write_bytes((poison / name).read_bytes())
    (folder / "honest.py").write_text(GREEDY.replace('name = "greedy"', 'name = "honest"'))
    (folder / "odd.py").write_text(GREEDY.replace('name = "greedy"', "name = " + repr(PAYLOAD)))
    db = tmp_path / "t.sqlite"
    argv = (
        "tournament",
        str(folder),
        "greedy",
        "--db",
        str(db),
        "-n",
        "1",
        "-k",
        "2",
        "-j",
        "2",
        "-q",
        "--max-tables",
        "6",
    )
    first = arena(*argv, timeout=600)
    err = first.stderr.decode()
    assert first.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    warned = [line for line in err.splitlines() if "will be recorded as crashed" in line]
    assert len(warned) == 5 and all(line.isprintable() for line in warned), err
    assert terminal_safe(first.stdout)
    again = arena(*argv, timeout=600)
    assert again.returncode == 0 and b"Traceback" not in again.stderr, again.stderr[-2000:]
    assert again.stdout == first.stdout  # nothing left to play: the same standings
    shown = json.loads(arena("standings", "--db", str(db), "--json").stdout)
    rows = {r["bot"]: r for r in shown["overall"]["standings"]}
    for name in ("chain", "latin1", "huge", "nul", "bidi"):
        assert rows[name]["games"] > 0 and rows[name]["retired"] == rows[name]["games"], rows[name]
        assert rows[name]["kind"] == "file"
    assert rows["honest"]["faults"] == 0 and rows["greedy"]["kind"] == "built-in"
    assert rows["odd"]["faults"] == 0 and all(r["bot"].isprintable() for r in rows.values())


# -- names -----------------------------------------------------------------------------


def test_names_are_cleaned_printable_bounded_and_never_empty() -> None:
    for raw in (PAYLOAD, "\udcff", "", "   ", "x" * 500, "\u200b", "gre\u200bedy", None):
        name = clean_name(raw)
        assert name and name.isprintable() and len(name) <= 40, (raw, name)
    assert clean_name("gre\u200bedy") != "greedy"  # an invisible character is shown, not dropped
    assert BotSource(PAYLOAD, "").name.isprintable()


def test_a_name_with_a_lone_surrogate_plays_and_prints(tmp_path: Path) -> None:
    bot = tmp_path / "surr.py"
    bot.write_text(GREEDY.replace('name = "greedy"', "name = '\\udcff\\ud800 x'"))
    for fmt in ("table", "json", "csv", "markdown"):
        done = arena("play", str(bot), "random", "-n", "2", "-q", "--format", fmt)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert terminal_safe(done.stdout)
    db = tmp_path / "t.sqlite"
    done = arena("tournament", str(bot), "greedy", "random", "--db", str(db), "-n", "1", "-q")
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_reference_names_are_reserved_for_the_built_in_bots() -> None:
    kinds = ["file", "registry", "registry", "file", "file", "human"]
    names = ["greedy", "greedy", "random", "Greedy", "mine", "human"]
    assert entrant_labels(names, kinds, frozenset({"greedy", "random", "human"})) == [
        "greedy (file)",
        "greedy",
        "random",
        "Greedy (file)#2",
        "mine",
        "human",
    ]
    assert entrant_labels(["human"], ["file"], frozenset({"human"})) == ["human (file)"]
    assert entrant_labels(
        ["greedy#2", "greedy", "greedy"], ["file", "registry", "registry"], frozenset({"greedy"})
    ) == ["greedy#2 (file)", "greedy", "greedy#2"]


def test_play_table_says_which_entry_is_a_file(tmp_path: Path) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(GREEDY)  # calls itself greedy
    for order in ((str(fake), "greedy"), ("greedy", str(fake))):
        done = arena("play", *order, "-n", "2", "-q", "--json")
        assert done.returncode == 0, done.stderr.decode()
        rows = {r["bot"]: r["kind"] for r in json.loads(done.stdout)["standings"]}
        assert rows == {"greedy": "built-in", "greedy (file)": "file"}


def test_a_folder_file_named_like_a_reference_bot_is_marked(tmp_path: Path) -> None:
    folder = tmp_path / "entries"
    folder.mkdir()
    (folder / "greedy.py").write_text(GREEDY)
    (folder / "random.py").write_text(GREEDY)
    done = arena("tournament", str(folder), "greedy", "--db", str(tmp_path / "t.sqlite"), "-n", "1", "-q")
    assert done.returncode == 0, done.stderr.decode()
    table = done.stdout.decode()
    assert "greedy (file)" in table and "random (file)" in table and "built-in" in table
    assert "greedy#2" not in table


# -- terminal escaping ----------------------------------------------------------------------


def test_escape_makes_every_payload_visible_and_one_line() -> None:
    shown = escape(PAYLOAD)
    assert shown.isprintable() and "\n" not in shown
    for piece in ("\\x1b]52;c;", "\\x1b[2J", "\\x9b", "\\u202e", "\\u2066", "\\n", "\\r", "\\x7f", "\\udcff"):
        assert piece in shown
    assert escape("plain A\u2660 text, é") == "plain A\u2660 text, é"
    assert len(escape("x" * 1000, 50)) <= 53


def test_verbose_play_replay_check_and_standings_print_no_escape(tmp_path: Path) -> None:
    bot = tmp_path / "loud.py"
    loud = GREEDY.replace('name = "greedy"', "name = " + repr(PAYLOAD)).replace(
        "        turn.finish()\n",
        f"        turn.say({PAYLOAD!r})\n        print({PAYLOAD!r})\n        turn.finish()\n",
        1,
    )
    bot.write_text(loud)
    record = tmp_path / "games.jsonl"
    done = arena("play", str(bot), "greedy", "-n", "1", "-q", "-v", "--replay", str(record))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert terminal_safe(done.stdout) and b"forged" in done.stdout
    assert not [line for line in done.stdout.decode().splitlines() if line.lstrip().startswith("greedy: forged")]
    kept = [json.loads(line) for line in record.read_text().splitlines()]
    assert any(e.get("event") == "say" and "\x1b]52" in e["text"] for e in kept)  # the record keeps it exact
    shown = arena("replay", str(record))
    assert shown.returncode == 0 and terminal_safe(shown.stdout)
    checked = arena("check", str(bot))
    assert terminal_safe(checked.stdout) and terminal_safe(checked.stderr)
    db = tmp_path / "t.sqlite"
    ran = arena("tournament", str(bot), "greedy", "random", "--db", str(db), "-n", "1", "-q")
    assert ran.returncode == 0 and terminal_safe(ran.stdout) and terminal_safe(ran.stderr)


def test_the_human_seat_shows_names_and_say_text_escaped() -> None:
    out: list[str] = []
    player = HumanPlayer(0, show=out.append, symbols=False)
    player.start_game(GameInfo(0, ("human", PAYLOAD, "random"), CONTEST, "1"))
    lines = player.news(
        [
            MappingProxyType({"event": "say", "seat": 1, "text": PAYLOAD}),
            MappingProxyType({"event": "fault", "seat": 1, "kind": "crash", "detail": PAYLOAD}),
        ]
    )
    for line in out + lines:
        assert line.isprintable(), line


def test_a_load_error_naming_a_hostile_path_prints_escaped(tmp_path: Path) -> None:
    bad = tmp_path / "x\x1b[2J\u202e.py"
    bad.write_bytes(b"\xff\xfe")
    line = assert_one_line_error(arena("play", str(bad), "greedy", "-n", "1", "-q"))
    assert "\\x1b[2J\\u202e" in line
