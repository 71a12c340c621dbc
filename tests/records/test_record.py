"""Game records: ``arena play --replay FILE`` follows docs/record-format.md, and
``arena replay FILE`` prints a readable log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import verify as independent_checker
from arena.cli import main
from arena.game.cards import SUIT_SYMBOLS, Card
from arena.game.rules import CONTEST, Rules
from arena.records.files import read_games

FIELDS = {
    "game": {"version", "game", "seed", "players", "rules"},
    "deal": {"round", "first", "hands", "stock", "scores"},
    "put": {"seat", "card"},
    "draw": {"seat", "card"},
    "finish": {"seat"},
    "penalty": {"seat", "card", "rank"},
    "skip": {"seat"},
    "reshuffle": {"stock"},
    "fault": {"seat", "kind", "detail"},
    "say": {"seat", "text"},
    "round": {"round", "winner", "points", "scores", "burned"},
    "end": {"scores", "losers", "places", "rounds"},
}
FAULT_KINDS = {"exception", "illegal-finish", "timeout", "crash", "memory", "retired"}

FAULTY_BOT = '''"""Faulty: talks, and misbehaves now and then (for record tests)."""


class Bot:
    name = "faulty"
    k = 0

    def move(self, turn):
        self.k = self.k + 1
        turn.say("move " + str(self.k))
        if self.k % 9 == 0:
            raise ValueError("every ninth move")
        if self.k % 13 == 0 and not turn.can_finish():
            return
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = options[0]
                turn.put(card, "d" if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


def play(tmp_path: Path, capsys, *args: str, name: str = "games.jsonl") -> Path:
    path = tmp_path / name
    code = main(["play", *args, "--replay", str(path), "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return path


def is_card(text: object) -> bool:
    return isinstance(text, str) and str(Card(text)) == text


def check_record_format(path: Path, rules: Rules = CONTEST) -> int:
    """Check every line's fields and the order rules of docs/record-format.md. Returns the game count."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    games = 0
    i = 0
    while i < len(lines):
        head = lines[i]
        assert head["event"] == "game", f"line {i + 1}: a game starts with its game line"
        j = next((k for k in range(i + 1, len(lines)) if lines[k]["event"] == "game"), len(lines))
        check_game(lines[i:j], rules)
        games += 1
        i = j
    return games


def check_game(events: list[dict], rules: Rules) -> None:
    head = events[0]
    assert head["version"] == 1
    assert isinstance(head["game"], str) and isinstance(head["seed"], int)
    players = head["players"]
    n = len(players)
    assert 2 <= n <= 6
    for s, p in enumerate(players):
        assert set(p) == {"seat", "name", "bot"} and p["seat"] == s
        assert isinstance(p["name"], str) and isinstance(p["bot"], str)
    assert Rules.from_dict(head["rules"]) == rules
    assert events[-1]["event"] == "end"
    assert sum(e["event"] == "end" for e in events) == 1

    for e in events:
        kind = e["event"]
        assert kind in FIELDS, f"unknown event {kind}"
        assert FIELDS[kind] <= set(e), f"{kind} lacks {FIELDS[kind] - set(e)}"
        for key in ("seat", "first", "winner"):
            if key in e and e[key] is not None:
                assert isinstance(e[key], int) and 0 <= e[key] < n
        if kind == "put":
            assert is_card(e["card"])
            if Card(e["card"]).rank == "j":
                assert e["suit"] in ("s", "c", "h", "d")
            else:
                assert "suit" not in e
            assert e.get("opening", False) in (True, False)
        elif kind in ("draw", "penalty"):
            assert is_card(e["card"])
            if kind == "penalty":
                assert e["rank"] in ("7", "8")
        elif kind == "deal":
            assert len(e["hands"]) == n and len(e["scores"]) == n
            cards = [c for h in e["hands"] for c in h] + e["stock"]
            assert all(is_card(c) for c in cards) and len(cards) == 36 == len(set(cards))
            assert all(len(h) == rules.hand_size for h in e["hands"])
        elif kind == "reshuffle":
            assert all(is_card(c) for c in e["stock"])
        elif kind == "fault":
            assert e["kind"] in FAULT_KINDS and isinstance(e["detail"], str)
        elif kind == "say":
            assert isinstance(e["text"], str)
        elif kind in ("round", "end"):
            assert len(e["scores"]) == n
            if kind == "round":
                assert len(e["points"]) == n and isinstance(e["burned"], list)
            else:
                assert len(e["places"]) == n and isinstance(e["losers"], list)

    # order: deal, opening put, moves (put/draw..., finish, penalties, skips), round ... end
    rounds = 0
    state = "between"  # between rounds
    mover = None
    walk = None  # the seat whose turn comes next after a finish
    for k, e in enumerate(events[1:], start=2):
        kind = e["event"]
        where = f"event {k} ({kind})"
        if kind in ("say", "fault"):  # may come anywhere but inside a reshuffle-draw pair
            continue
        if kind == "reshuffle":
            nxt = events[k]  # the following event (events is 0-based, k is 1-based)
            assert nxt["event"] in ("draw", "penalty"), f"{where}: a reshuffle comes right before a draw"
            assert state in ("move", "effects", "next"), where
            continue
        if kind == "deal":
            assert state == "between", where
            rounds += 1
            assert e["round"] == rounds
            state, mover = "opening", e["first"]
            first = e["first"]
            if rules.first_player == "rotate":
                assert first == (rounds - 1) % n
        elif kind == "put" and state == "opening":
            assert e.get("opening") is True and e["seat"] == mover, where
            assert e["card"] == events_deal_stock_top(events, k)
            state = "move"
        elif kind in ("put", "draw", "finish"):
            assert not e.get("opening"), f"{where}: only the round's first card is the opening"
            if state in ("effects", "next"):  # the next move starts (a finish alone: R4.5)
                mover = walk
                state = "move"
            assert state == "move" and e["seat"] == mover, where
            if kind == "finish":
                state = "effects"
                walk = (mover + 1) % n
        elif kind == "penalty":
            assert state == "effects", f"{where}: effect draws come right after the finish"
            assert e["seat"] != mover
        elif kind == "skip":
            assert state in ("effects", "next"), where
            assert e["seat"] == walk, f"{where}: skips pass in seat order"
            walk = (walk + 1) % n
            state = "next"
        elif kind == "round":
            assert state == "effects", f"{where}: a round ends right after a move's effects"
            assert e["round"] == rounds
            state = "between"
        elif kind == "end":
            assert state == "between" and e["rounds"] == rounds
    assert rounds >= 1


def events_deal_stock_top(events: list[dict], k: int) -> str:
    deal = next(e for e in reversed(events[: k - 1]) if e["event"] == "deal")
    return deal["stock"][0]


def test_record_follows_the_format(tmp_path, capsys):
    path = play(tmp_path, capsys, "random", "greedy", "random", "--games", "12", "--seed", "4")
    assert check_record_format(path) == 12
    games = list(read_games(path))
    assert [g[0]["game"] for g in games] == [str(i) for i in range(1, 13)]
    head = games[0][0]
    assert [p["bot"] for p in head["players"]] == ["random", "greedy", "random"]
    assert [p["name"] for p in head["players"]] == ["random", "greedy", "random#2"]  # the entrants' labels
    # seats rotate: game 2 seats the second entrant first
    assert [p["bot"] for p in games[1][0]["players"]] == ["greedy", "random", "random"]


def test_record_has_every_move_event_kind(tmp_path, capsys):
    path = play(tmp_path, capsys, "random", "random", "--games", "10", "--seed", "1")
    kinds = {json.loads(line)["event"] for line in path.read_text().splitlines()}
    assert {"game", "deal", "put", "draw", "finish", "penalty", "skip", "reshuffle", "round", "end"} <= kinds


def test_record_with_faults_and_messages(tmp_path, capsys):
    bot = tmp_path / "faulty.py"
    bot.write_text(FAULTY_BOT)
    path = play(tmp_path, capsys, str(bot), "greedy", "--games", "6", "--seed", "2", "--trusted")
    assert check_record_format(path) == 6
    events = [json.loads(line) for line in path.read_text().splitlines()]
    faults = [e for e in events if e["event"] == "fault"]
    assert {f["kind"] for f in faults} >= {"exception", "retired"}
    assert any(e["event"] == "say" and e["text"].startswith("move ") for e in events)
    heads = [e for e in events if e["event"] == "game"]
    assert {p["bot"] for h in heads for p in h["players"]} == {str(bot), "greedy"}
    assert independent_checker.check_file(str(path)) == []


@pytest.mark.parametrize(
    "variant, rules",
    [
        ("jack-finish", Rules(name="jack-finish", jack_finish=20)),
        ("stacked", Rules(name="stacked", stacked_effects=True)),
        ("teams", Rules(name="teams", teams=True)),
        ("winner-starts", Rules(name="winner-starts", first_player="winner")),
    ],
)
def test_record_rules_line_names_the_variant(tmp_path, capsys, variant, rules):
    path = play(tmp_path, capsys, "random", "greedy", "random", "greedy", "--games", "4", "--variant", variant)
    assert check_record_format(path, rules) == 4
    assert independent_checker.check_file(str(path)) == []


def test_record_rule_knobs(tmp_path, capsys):
    path = play(tmp_path, capsys, "random", "greedy", "--games", "3", "--rule", "limit=60", "--rule", "hand_size=6")
    rules = Rules(limit=60, hand_size=6)
    assert check_record_format(path, rules) == 3
    assert independent_checker.check_file(str(path)) == []


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_records_pass_the_independent_checker(tmp_path, capsys, n):
    bots = ["random", "greedy"] * 3
    path = play(tmp_path, capsys, *bots[:n], "--games", "30", "--seed", str(n))
    errors = independent_checker.check_file(str(path))
    assert errors == [], errors[:5]
    assert check_record_format(path) == 30


def test_replay_prints_a_readable_log(tmp_path, capsys):
    path = play(tmp_path, capsys, "random", "greedy", "--games", "2", "--seed", "3")
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    events = [json.loads(line) for line in path.read_text().splitlines()]
    lines = out.splitlines()
    assert lines[0].startswith("game 1")
    assert sum(line.startswith("game ") for line in lines) == 2
    assert any(sym in out for sym in SUIT_SYMBOLS.values())
    assert not any(c in out for c in ('"event"', "{"))  # not JSON
    # one move a line; one line per round result; the game's end
    move_lines = [line for line in lines if line.startswith("  ") and line.rstrip().endswith("|")]
    assert len(move_lines) == sum(e["event"] == "finish" for e in events)
    assert sum(line.startswith("== round") for line in lines) == sum(e["event"] == "round" for e in events)
    assert sum(line.startswith("## game over") for line in lines) == 2


def test_replay_one_game_and_one_seats_view(tmp_path, capsys):
    path = play(tmp_path, capsys, "random", "greedy", "--games", "3", "--seed", "3")
    assert main(["replay", str(path), "--game", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("game 2") and "game 1 " not in out and "game 3 " not in out
    assert main(["replay", str(path), "--game", "2", "--seat", "0"]) == 0
    hidden = capsys.readouterr().out
    assert "5 cards" in hidden  # seat 1's hand is not shown to seat 0
    assert "a card" in hidden  # nor what seat 1 drew
    assert "5 cards" not in out


def test_replay_of_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "nope.jsonl" in err


@pytest.mark.parametrize("content", ["not json\n", '{"no": "event"}\n', '{"event": "put", "seat": 0}\n', ""])
def test_replay_of_a_bad_file_is_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_record_seed_reproduces_every_deal(tmp_path, capsys):
    """The game line's seed determines every shuffle (issue 2; R3.1)."""
    from arena.game.engine import Game

    path = play(tmp_path, capsys, "random", "greedy", "random", "--games", "3", "--seed", "11")
    for events in read_games(path):
        head = events[0]
        rules = Rules.from_dict(head["rules"])
        for deal in (e for e in events if e["event"] == "deal"):
            game = Game(len(head["players"]), rules, seed=head["seed"])
            game.round = deal["round"] - 1
            game.start_round()
            again = game.log[0]
            assert (again["hands"], again["stock"]) == (deal["hands"], deal["stock"])


def _game(*events: dict) -> list[dict]:
    header = {"event": "game", "game": "1", "seed": 1, "players": [{"seat": 0, "name": "a"}, {"seat": 1, "name": "b"}]}
    return [header, *events]


def test_replay_keeps_a_draw_and_the_put_of_the_same_rank_apart():
    from arena.records.files import format_game

    lines = list(
        format_game(
            _game(
                {"event": "draw", "seat": 0, "card": "8c"},
                {"event": "put", "seat": 0, "card": "8s"},
                {"event": "finish", "seat": 0},
            )
        )
    )
    assert "  a#0: draws 8♣ puts 8♠ |" in lines


@pytest.mark.parametrize("rank, text", [("7", "(a 7)"), ("8", "(an 8)"), ("a", "(an ace)")])
def test_replay_names_the_effect_with_the_right_article(rank, text):
    from arena.records.files import format_game

    lines = list(format_game(_game({"event": "penalty", "seat": 1, "card": "9h", "rank": rank})))
    assert lines[-1].endswith(text)


def test_replay_shows_output_and_say_with_their_speaker():
    from arena.records.files import format_game

    lines = list(
        format_game(
            _game(
                {"event": "put", "seat": 0, "card": "9h"},
                {"event": "say", "seat": 1, "text": "hi", "output": True},
                {"event": "finish", "seat": 0},
            )
        )
    )
    assert "  b#1: prints 'hi'" in lines
    assert not any(line.startswith("  a#0") and "hi" in line for line in lines)


def test_the_event_types_agree_with_the_record_format():
    from typing import get_args, get_type_hints

    from arena.game.events import EVENT_NAMES, Event, FaultKind

    types = {get_args(get_type_hints(t)["event"])[0]: t for t in get_args(Event)}
    assert set(types) == set(FIELDS) == set(EVENT_NAMES)
    for name, typed in types.items():
        assert typed.__required_keys__ - {"event"} == FIELDS[name], name
    assert {k.value for k in FaultKind} == FAULT_KINDS


def test_replay_prints_no_control_character_from_a_hostile_record(tmp_path, capsys):
    """Every line of the log is escaped whole (red team: the game id and the rules name were
    printed raw: an OSC 52 clipboard write, a C1 CSI, a bidi override reached the terminal)."""
    from support.cli import run

    from arena.records.files import read_games

    path = tmp_path / "g.jsonl"
    code, _, err = run(capsys, "play", "greedy", "random", "-n", "1", "--seed", "3", "-q", "--replay", str(path))
    assert code == 0, err
    events = next(read_games(path))
    events[0]["game"] = "1\x1b]52;c;SGk=\x07\u202e"
    events[0]["rules"]["name"] = "v\x1b[31m\x9b\u2028"
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("".join(json.dumps(e) + "\n" for e in events))
    for extra in ((), ("--seat", "0")):
        code, out, err = run(capsys, "replay", str(hostile), *extra)
        assert code == 0, err
        assert all(line.isprintable() for line in out.splitlines()), out[:300]
        assert "\\x1b]52;c;SGk=\\x07\\u202e" in out.splitlines()[0]
