"""``arena play``: the results table, JSON, seeds, seat rotation and bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from support.cli import one_line_error, run, run_process

COLUMNS = ["bot", "kind", "games", "wins", "losses", "avg_place", "avg_score", "faults"]

GREEDY_COPY = '''"""Copycat: greedy's idea in a file of its own (for seat rotation tests)."""


class Bot:
    name = "copycat"

    def move(self, turn):
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = max(options, key=lambda c: c.points)
                turn.put(card)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


def parse_table(text: str) -> list[dict]:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    header = lines[0].split()
    assert set(lines[1]) <= {"-", " "}
    rows = []
    for line in lines[2:]:
        cells = line.split()
        rows.append(dict(zip(header, cells, strict=False)))
    return header, rows


def test_table_output_columns(capsys):
    code, out, err = run(capsys, "play", "random", "greedy", "--games", "10", "--seed", "1", "-q")
    assert code == 0, err
    header, rows = parse_table(out)
    assert header == COLUMNS
    assert [r["bot"] for r in rows] == ["random", "greedy"]
    for r in rows:
        assert int(r["games"]) == 10
        assert 0 <= int(r["wins"]) <= 10 and 0 <= int(r["losses"]) <= 10
        assert 1.0 <= float(r["avg_place"]) <= 2.0
        assert int(r["faults"]) == 0


def test_json_has_the_same_numbers(capsys):
    args = ("play", "random", "greedy", "random", "--games", "9", "--seed", "5", "-q")
    code, table_out, _ = run(capsys, *args)
    assert code == 0
    code, json_out, _ = run(capsys, *args, "--json")
    assert code == 0
    doc = json.loads(json_out)
    assert doc["games"] == 9 and doc["seed"] == 5
    _, rows = parse_table(table_out)
    assert [s["bot"] for s in doc["standings"]] == [r["bot"] for r in rows] == ["random", "greedy", "random#2"]
    for s, r in zip(doc["standings"], rows, strict=True):
        assert list(s) == COLUMNS
        assert s["games"] == int(r["games"]) and s["wins"] == int(r["wins"]) and s["losses"] == int(r["losses"])
        assert s["faults"] == int(r["faults"])
        assert abs(s["avg_place"] - float(r["avg_place"])) < 0.0011
        assert abs(s["avg_score"] - float(r["avg_score"])) < 0.0011


def test_json_numbers_match_the_records(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    code, out, _ = run(
        capsys, "play", "random", "greedy", "--games", "8", "--seed", "2", "-q", "--json", "--replay", str(path)
    )
    assert code == 0
    doc = json.loads(out)
    tally = {b: Counter() for b in ("random", "greedy")}
    players = None
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e["event"] == "game":
            players = [p["bot"] for p in e["players"]]
        elif e["event"] == "end":
            for seat, bot in enumerate(players):
                t = tally[bot]
                t["games"] += 1
                t["wins"] += e["places"][seat] == 1
                t["losses"] += seat in e["losers"]
                t["place"] += e["places"][seat]
                t["score"] += e["scores"][seat]
    for s in doc["standings"]:
        t = tally[s["bot"]]
        assert s["games"] == t["games"] == 8
        assert s["wins"] == t["wins"] and s["losses"] == t["losses"]
        assert s["avg_place"] == round(t["place"] / 8, 3)
        assert s["avg_score"] == round(t["score"] / 8, 2)


def test_same_seed_same_output_different_seed_differs(capsys):
    a = run(capsys, "play", "random", "greedy", "random", "--games", "15", "--seed", "7", "-q", "--json")
    b = run(capsys, "play", "random", "greedy", "random", "--games", "15", "--seed", "7", "-q", "--json")
    c = run(capsys, "play", "random", "greedy", "random", "--games", "15", "--seed", "8", "-q", "--json")
    assert a == b
    standings = lambda r: json.loads(r[1])["standings"]  # noqa: E731
    assert standings(a) != standings(c)


def test_same_seed_same_records(tmp_path, capsys):
    p1, p2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run(capsys, "play", "random", "random", "--games", "3", "--seed", "9", "-q", "--replay", str(p1))
    run(capsys, "play", "random", "random", "--games", "3", "--seed", "9", "-q", "--replay", str(p2))
    assert p1.read_text() == p2.read_text()


@pytest.mark.parametrize("n", [2, 3, 4])
def test_seats_rotate(tmp_path, capsys, n):
    bots = []
    for i in range(n - 2):
        f = tmp_path / f"copy{i}.py"
        f.write_text(GREEDY_COPY)
        bots.append(str(f))
    bots = ["random", "greedy"] + bots
    path = tmp_path / "r.jsonl"
    games = 3 * n
    code, _, err = run(
        capsys, "play", *bots, "--games", str(games), "--seed", "3", "-q", "--trusted", "--replay", str(path)
    )
    assert code == 0, err
    seats = Counter()
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e["event"] == "game":
            assert sorted(p["bot"] for p in e["players"]) == sorted(bots)
            for p in e["players"]:
                seats[(p["bot"], p["seat"])] += 1
    assert seats == Counter({(b, s): 3 for b in bots for s in range(n)})


def test_verbose_prints_the_game_log(capsys):
    code, out, _ = run(capsys, "play", "random", "greedy", "--games", "1", "-q", "--verbose")
    assert code == 0
    assert "game 1" in out and "== round 1" in out and "## game over" in out
    assert out.rstrip().splitlines()[-4].split() == COLUMNS


@pytest.mark.parametrize(
    "fmt, check",
    [
        ("markdown", lambda out: out.splitlines()[0].startswith("| bot")),
        ("csv", lambda out: out.splitlines()[0] == ",".join(COLUMNS)),
        ("json", lambda out: json.loads(out)["games"] == 2),
    ],
)
def test_formats(capsys, fmt, check):
    code, out, _ = run(capsys, "play", "random", "greedy", "--games", "2", "-q", "--format", fmt)
    assert code == 0 and check(out)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--games", "0"], "0"),
        (["--games", "-3"], "-3"),
        (["--games", "many"], "many"),
        (["--seed", "x"], "x"),
        (["--seed", "1.5"], "1.5"),
    ],
)
def test_bad_games_or_seed_is_a_one_line_error(capsys, args, needle):
    one_line_error(*run(capsys, "play", "random", "greedy", *args), needle)


def test_unknown_bot_is_a_one_line_error(capsys):
    one_line_error(*run(capsys, "play", "random", "nosuchbot"), "nosuchbot")


def test_missing_bot_file_is_a_one_line_error(capsys, tmp_path):
    one_line_error(*run(capsys, "play", "random", str(tmp_path / "gone.py")), "gone.py")


@pytest.mark.parametrize("count", [1, 7])
def test_wrong_number_of_bots_is_a_one_line_error(capsys, count):
    one_line_error(*run(capsys, "play", *(["random"] * count)), str(count))


def test_unknown_variant_rule_or_format_is_a_one_line_error(capsys):
    one_line_error(*run(capsys, "play", "random", "greedy", "--variant", "chess"), "chess")
    one_line_error(*run(capsys, "play", "random", "greedy", "--rule", "colour=red"), "colour")
    one_line_error(*run(capsys, "play", "random", "greedy", "--rule", "limit=lots"), "limit")
    one_line_error(*run(capsys, "play", "random", "greedy", "--format", "xml", "--games", "1", "-q"), "xml")


def test_teams_with_three_bots_is_a_one_line_error(capsys):
    one_line_error(*run(capsys, "play", "random", "greedy", "random", "--variant", "teams"))


def test_the_real_command_end_to_end(tmp_path):
    path = tmp_path / "r.jsonl"
    done = run_process("play", "random", "greedy", "--games", "3", "--seed", "1", "--replay", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == COLUMNS
    done = run_process("replay", str(path))
    assert done.returncode == 0 and done.stdout.startswith("game 1")
    done = run_process("replay", str(tmp_path / "missing.jsonl"))
    one_line_error(done.returncode, done.stdout, done.stderr, "missing.jsonl")
    done = run_process("play", "random", "nobody")
    one_line_error(done.returncode, done.stdout, done.stderr, "nobody")


def test_the_real_command_bad_games_is_one_line():
    done = run_process("play", "random", "greedy", "--games", "0")
    one_line_error(done.returncode, done.stdout, done.stderr, "--games")


def test_unwritable_replay_file_is_a_one_line_error(capsys, tmp_path):
    one_line_error(
        *run(
            capsys,
            "play",
            "random",
            "greedy",
            "--games",
            "1",
            "-q",
            "--replay",
            str(tmp_path / "no" / "such" / "dir.jsonl"),
        ),
        "dir.jsonl",
    )


def test_replay_of_a_folder_is_a_one_line_error(capsys, tmp_path):
    one_line_error(*run(capsys, "replay", str(tmp_path)), str(tmp_path))


FAULTY = '''"""Faulty: raises on every fourth move."""


class Bot:
    name = "faulty"
    k = 0

    def move(self, turn):
        self.k = self.k + 1
        if self.k % 4 == 0:
            raise RuntimeError("every fourth move")
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


def test_faults_are_counted_in_the_table(tmp_path, capsys):
    bot = tmp_path / "faulty.py"
    bot.write_text(FAULTY)
    path = tmp_path / "r.jsonl"
    code, out, err = run(
        capsys,
        "play",
        str(bot),
        "greedy",
        "--games",
        "4",
        "--seed",
        "1",
        "--trusted",
        "-q",
        "--json",
        "--replay",
        str(path),
    )
    assert code == 0, err
    standings = {s["bot"]: s for s in json.loads(out)["standings"]}
    faults = Counter()
    players = []
    retired = Counter()
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e["event"] == "game":
            players = [p["bot"] for p in e["players"]]
        elif e["event"] == "fault":
            if e["kind"] == "retired":
                retired[players[e["seat"]]] += 1
            else:
                faults[players[e["seat"]]] += 1
    assert standings["faulty"]["faults"] == faults[str(bot)] == 12  # retired after 3 in each game
    assert retired[str(bot)] == 4
    assert standings["greedy"]["faults"] == 0
    assert standings["faulty"]["avg_place"] == 2.0  # retired bots place last
