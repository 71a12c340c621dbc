"""Tests of the independent rules checker itself, on hand-written records."""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
from pathlib import Path

import arena.verify as ic

DECK = [r + s for s in "schd" for r in ("6", "7", "8", "9", "10", "j", "q", "k", "a")]
POINTS = {"6": 0, "7": 0, "8": 0, "9": 0, "10": 10, "j": 20, "q": 10, "k": 10, "a": 15}


def pts(cards):
    return sum(POINTS[c[:-1]] for c in cards)


def stock_for(hands, top):
    """The stock: ``top`` cards first (in order), then the rest of the deck."""
    used = [c for h in hands for c in h] + list(top)
    assert len(set(used)) == len(used)
    return list(top) + [c for c in DECK if c not in used]


def game_line(n=2, gid=1, **rules):
    return {
        "event": "game",
        "version": 1,
        "game": gid,
        "seed": 0,
        "players": [{"seat": s, "name": f"p{s}", "bot": "hand"} for s in range(n)],
        "rules": {"name": "contest", **rules},
    }


def put(seat, card, **extra):
    return {"event": "put", "seat": seat, "card": card, **extra}


def draw(seat, card):
    return {"event": "draw", "seat": seat, "card": card}


def fin(seat):
    return {"event": "finish", "seat": seat}


def pen(seat, card, rank):
    return {"event": "penalty", "seat": seat, "card": card, "rank": rank}


def skip(seat):
    return {"event": "skip", "seat": seat}


def two_player_game(burn=None, gid=1):
    """A two-round, two-player contest game, written move by move.

    Round 1 (seat 0 first): opening 9s, seat 0 runs its nines; seat 1 puts 6d,
    has no cover, draws 7s then ad and covers with the ace (seat 0 loses a
    turn); seat 1 moves again, draws 8c and finishes; seat 0 goes out with
    7d 7c, and seat 1 draws js 6h as sevens' effect. Round 2 (seat 1 first):
    opening 8c plus 8d 8h 8s: seat 0 draws eight cards and loses four turns;
    seat 1 puts jc (orders clubs), then qc and wins. Seat 0 ends over 125.
    """
    rules = {} if burn is None else {"burn": burn}
    h1 = [["9h", "9c", "9d", "7d", "7c"], ["6d", "10c", "qc", "kh", "8s"]]
    s1 = stock_for(h1, ["9s", "7s", "ad", "8c", "js", "6h"])
    seat1_left = ["10c", "qc", "kh", "8s", "7s", "8c", "js", "6h"]
    p1 = [0, pts(seat1_left)]
    assert p1 == [0, 50]
    sc1 = [0, 0 if burn == 50 else 50]
    h2 = [["ac", "ah", "as", "10s", "10h"], ["8d", "8h", "8s", "jc", "qc"]]
    eights = ["jd", "jh", "js", "ad", "kd", "ks", "qh", "qs"]
    s2 = stock_for(h2, ["8c"] + eights)
    p2 = [pts(h2[0] + eights), 0]
    assert p2 == [180, 0]
    sc2 = [180, sc1[1]]
    return [
        game_line(gid=gid, **rules),
        {"event": "deal", "round": 1, "first": 0, "hands": h1, "stock": s1, "scores": [0, 0]},
        put(0, "9s", opening=True),
        put(0, "9h"),
        put(0, "9c"),
        put(0, "9d"),
        fin(0),
        put(1, "6d"),
        draw(1, "7s"),
        draw(1, "ad"),
        put(1, "ad"),
        fin(1),
        skip(0),
        draw(1, "8c"),
        fin(1),
        put(0, "7d"),
        put(0, "7c"),
        fin(0),
        pen(1, "js", "7"),
        pen(1, "6h", "7"),
        {"event": "round", "round": 1, "winner": 0, "points": p1, "scores": sc1, "burned": [1] if burn == 50 else []},
        {"event": "deal", "round": 2, "first": 1, "hands": h2, "stock": s2, "scores": sc1},
        put(1, "8c", opening=True),
        put(1, "8d"),
        put(1, "8h"),
        put(1, "8s"),
        fin(1),
        *[pen(0, c, "8") for c in eights],
        skip(0),
        put(1, "jc", suit="c"),
        fin(1),
        skip(0),
        put(1, "qc"),
        fin(1),
        {"event": "round", "round": 2, "winner": 1, "points": p2, "scores": sc2, "burned": []},
        {"event": "end", "scores": sc2, "losers": [0], "places": [2, 1], "rounds": 2},
    ]


def index_of(record, **match):
    for i, ev in enumerate(record):
        if all(ev.get(k) == v for k, v in match.items()):
            return i
    raise LookupError(match)


def errors_of(record):
    return ic.check_lines(record)


def assert_rejected(record, rule):
    errors = errors_of(record)
    assert errors, "the mutated record was accepted"
    assert any(f" {rule} " in e for e in errors), errors
    return errors


# -- valid records ---------------------------------------------------------------
def test_valid_two_player_game():
    assert errors_of(two_player_game()) == []


def test_valid_with_burn_knob():
    assert errors_of(two_player_game(burn=50)) == []


def test_fault_and_say_lines_are_ignored():
    rec = two_player_game()
    i = index_of(rec, event="draw", card="7s")
    rec.insert(i, {"event": "say", "seat": 1, "text": "hmm"})
    rec.insert(i, {"event": "fault", "seat": 1, "kind": "timeout", "detail": "slow"})
    assert errors_of(rec) == []


def test_several_games_in_one_file_and_cli(tmp_path):
    path = tmp_path / "games.jsonl"
    lines = two_player_game(gid=1) + two_player_game(burn=50, gid=2)
    path.write_text("".join(json.dumps(ev) + "\n" for ev in lines))
    assert ic.check_file(str(path)) == []
    out = subprocess.run([sys.executable, "-m", "arena", "verify", str(path)], capture_output=True, text=True)
    assert out.returncode == 0 and "2 games: 2 OK, 0 FAIL" in out.stdout

    bad = two_player_game(gid=2)
    bad[index_of(bad, event="put", card="9d")]["card"] = "7c"
    path.write_text("".join(json.dumps(ev) + "\n" for ev in two_player_game(gid=1) + bad))
    errors = ic.check_file(str(path))
    assert len(errors) == 1 and errors[0].startswith("game 2 line ") and " R4.3 " in errors[0]
    # the line number is the file's: game 2 starts after game 1's lines
    assert f"line {len(two_player_game()) + index_of(bad, event='put', card='7c') + 1}:" in errors[0]
    out = subprocess.run([sys.executable, "-m", "arena", "verify", str(path)], capture_output=True, text=True)
    assert out.returncode == 1 and "game 2: FAIL line " in out.stdout and "R4.3" in out.stdout


# -- mutations that must be rejected ------------------------------------------------
def test_rejects_put_breaking_r43():
    rec = two_player_game()
    rec.insert(index_of(rec, event="put", card="9d"), put(0, "7c"))  # 7c after 9c
    assert_rejected(rec, "R4.3")


def test_rejects_first_put_not_matching():
    rec = two_player_game()
    i = index_of(rec, event="put", card="6d")
    rec[i]["card"] = "kh"  # top 9d: neither suit d nor rank 9
    assert_rejected(rec, "R4.2")


def test_rejects_card_not_in_hand():
    rec = two_player_game()
    rec[index_of(rec, event="put", card="9d")]["card"] = "9s"  # the opening card, already on the pile
    assert_rejected(rec, "R4")


def test_rejects_draw_in_opening_move():
    rec = two_player_game()
    rec.insert(index_of(rec, event="put", card="9h"), draw(0, "7s"))  # the opening card counts as put
    assert_rejected(rec, "R4.4")


def test_rejects_second_voluntary_draw():
    rec = two_player_game()
    i = index_of(rec, event="draw", card="8c")
    rec.insert(i + 1, draw(1, "js"))
    assert_rejected(rec, "R4.4")


def test_rejects_draw_while_cover_in_hand():
    rec = two_player_game()
    i = index_of(rec, event="draw", card="ad")
    rec.insert(i + 1, draw(1, "8c"))  # ad covers 6d: no more drawing
    assert_rejected(rec, "R5.3")


def test_rejects_finish_with_uncovered_six():
    rec = two_player_game()
    i = index_of(rec, event="put", card="6d")
    rec[i + 1 : i + 5] = [fin(1)]
    assert_rejected(rec, "R5.1")


def test_rejects_finish_without_put_or_draw():
    rec = two_player_game()
    i = index_of(rec, event="draw", card="8c")
    del rec[i]
    assert_rejected(rec, "R4.5")


def test_rejects_draw_not_from_stock_top():
    rec = two_player_game()
    rec[index_of(rec, event="draw", card="8c")]["card"] = "js"
    assert_rejected(rec, "R3.1")


def test_rejects_wrong_penalty_target():
    rec = two_player_game()
    rec[index_of(rec, event="penalty", card="js")]["seat"] = 0
    assert_rejected(rec, "R6")


def test_rejects_missing_penalty():
    rec = two_player_game()
    del rec[index_of(rec, event="penalty", card="6h")]
    assert_rejected(rec, "R6.5")


def test_rejects_wrong_penalty_rank():
    rec = two_player_game()
    rec[index_of(rec, event="penalty", card="js")]["rank"] = "8"
    assert_rejected(rec, "R6.5")


def test_rejects_missing_skip():
    rec = two_player_game()
    del rec[index_of(rec, event="skip")]
    assert_rejected(rec, "R6.5")


def test_rejects_wrong_mover():
    rec = two_player_game()
    rec[index_of(rec, event="draw", card="8c")]["seat"] = 0
    rec[index_of(rec, event="draw", card="8c") + 1]["seat"] = 0
    assert_rejected(rec, "R2.1")


def test_rejects_wrong_burn():
    rec = two_player_game(burn=50)
    i = index_of(rec, event="round", round=1)
    rec[i]["scores"] = [0, 50]
    rec[i]["burned"] = []
    assert_rejected(rec, "R8.3")


def test_rejects_burn_that_did_not_happen():
    rec = two_player_game()
    i = index_of(rec, event="round", round=1)
    rec[i]["scores"] = [0, 0]
    rec[i]["burned"] = [1]
    assert_rejected(rec, "R8.3")


def test_rejects_wrong_points():
    rec = two_player_game()
    rec[index_of(rec, event="round", round=1)]["points"] = [0, 40]
    assert_rejected(rec, "R8.2")


def test_rejects_missing_card_in_deal():
    rec = two_player_game()
    deal = rec[index_of(rec, event="deal", round=1)]
    deal["stock"].pop()  # a card is lost
    assert_rejected(rec, "R1.1")


def test_rejects_duplicated_card_in_deal():
    rec = two_player_game()
    deal = rec[index_of(rec, event="deal", round=2)]
    deal["stock"][-1] = deal["stock"][-2]
    assert_rejected(rec, "R1.1")


def test_rejects_wrong_first_player():
    rec = two_player_game()
    rec[index_of(rec, event="deal", round=2)]["first"] = 0
    assert_rejected(rec, "R3.2")


def test_rejects_opening_not_stock_top():
    rec = two_player_game()
    rec[index_of(rec, event="put", card="9s")]["card"] = "7s"
    assert_rejected(rec, "R3.3")


def test_rejects_wrong_deal_scores():
    rec = two_player_game()
    rec[index_of(rec, event="deal", round=2)]["scores"] = [0, 0]
    assert_rejected(rec, "R2.2")


def test_rejects_wrong_places_and_losers():
    rec = two_player_game()
    rec[-1]["places"] = [1, 2]
    rec[-1]["losers"] = []
    errors = assert_rejected(rec, "R9.1")
    assert len(errors) == 2


def test_retired_seat_is_placed_last():
    rec = two_player_game()
    rec.insert(
        index_of(rec, event="put", card="qc"), {"event": "fault", "seat": 1, "kind": "retired", "detail": "gave up"}
    )
    assert_rejected(copy.deepcopy(rec), "R9.1")  # places [2, 1] ignore the retirement
    rec[-1]["places"] = [1, 2]
    assert errors_of(rec) == []


def test_rejects_game_going_on_after_limit():
    rec = two_player_game()
    rec[-1] = {"event": "deal", "round": 3, "first": 0, "hands": [], "stock": [], "scores": [180, 50]}
    assert_rejected(rec, "R2.3")


def test_rejects_truncated_record():
    rec = two_player_game()[:-1]
    errors = errors_of(rec)
    assert len(errors) == 1 and "end line" in errors[0]


# -- the stock running out, the move guard, knobs -------------------------------------
def five_player_game():
    """Five hands of seven: the stock is just the opening card, so it runs out at once.

    Moves: seat 0 puts 9h on the opening 9s; seat 1 puts 7h (seat 2 must draw:
    reshuffle of 9s 9h); seat 2 draws 9h voluntarily; seat 3 cannot draw at
    all and finishes bare (R4.5); seat 4 puts 7d (reshuffle of 7h, seat 0
    draws it). max_moves=5 then ends the round with no winner (R8.4).
    """
    hands = [
        ["9h", "6s", "7s", "8s", "10s", "js", "qs"],
        ["7h", "ks", "as", "6c", "7c", "8c", "9c"],
        ["10c", "jc", "qc", "kc", "ac", "6h", "8h"],
        ["10h", "jh", "qh", "kh", "ah", "6d", "8d"],
        ["7d", "9d", "10d", "jd", "qd", "kd", "ad"],
    ]
    stock = stock_for(hands, ["9s"])
    assert stock == ["9s"]
    final = [list(h) for h in hands]
    final[0].remove("9h")
    final[0].append("7h")
    final[1].remove("7h")
    final[2] += ["9s", "9h"]
    final[4].remove("7d")
    points = [pts(h) for h in final]
    return [
        game_line(n=5, hand_size=7, max_moves=5, max_rounds=1),
        {"event": "deal", "round": 1, "first": 0, "hands": hands, "stock": stock, "scores": [0] * 5},
        put(0, "9s", opening=True),
        put(0, "9h"),
        fin(0),
        put(1, "7h"),
        fin(1),
        {"event": "reshuffle", "stock": ["9s", "9h"]},
        pen(2, "9s", "7"),
        draw(2, "9h"),
        fin(2),
        fin(3),
        put(4, "7d"),
        fin(4),
        {"event": "reshuffle", "stock": ["7h"]},
        pen(0, "7h", "7"),
        {"event": "round", "round": 1, "winner": None, "points": points, "scores": points, "burned": []},
        {"event": "end", "scores": points, "losers": [], "places": sorted_places(points), "rounds": 1},
    ]


def sorted_places(scores):
    return [1 + sum(1 for o in scores if o < s) for s in scores]


def test_valid_reshuffles_lapses_and_move_guard():
    assert errors_of(five_player_game()) == []


def test_rejects_bad_reshuffle_stock():
    rec = five_player_game()
    rec[index_of(rec, event="reshuffle")]["stock"] = ["9s", "7h"]  # the top must stay on the pile
    assert_rejected(rec, "R7.1")


def test_rejects_missing_reshuffle():
    rec = five_player_game()
    del rec[index_of(rec, event="reshuffle")]
    assert_rejected(rec, "R7.1")


def test_rejects_draw_when_nothing_can_be_drawn():
    rec = five_player_game()
    rec.insert(index_of(rec, event="finish", seat=3), draw(3, "9h"))
    assert_rejected(rec, "R7.2")


def test_rejects_round_going_past_move_guard():
    rec = five_player_game()
    i = index_of(rec, event="round")
    rec[i:i] = [put(1, "7c"), fin(1)]
    assert_rejected(rec, "R8.4")


def test_rejects_winner_at_move_guard():
    rec = five_player_game()
    rec[index_of(rec, event="round")]["winner"] = 0
    assert_rejected(rec, "R8.4")


def test_ace_effect_targets_two_opponents():
    """Three players: an opening ah plus ac hit seats 1 and 2, who both skip."""
    hands = [["9c", "ac", "10h", "kh", "qh"], ["ad", "7c", "8c", "6s", "10c"], ["6d", "7d", "8d", "9d", "10d"]]
    stock = stock_for(hands, ["ah"])
    rec = [
        game_line(n=3, max_rounds=1, max_moves=3),
        {"event": "deal", "round": 1, "first": 0, "hands": hands, "stock": stock, "scores": [0, 0, 0]},
        # opening ah + ac: two aces hit seats 1 and 2, both lose their turn
        put(0, "ah", opening=True),
        put(0, "ac"),
        fin(0),
        skip(1),
        skip(2),
        put(0, "9c"),
        fin(0),
        put(1, "ad"),
        fin(1),  # top 9c: ad does not match
    ]
    assert_rejected(rec, "R4.2")
    rec[-2:] = [draw(1, stock[1]), fin(1)]  # seat 1 draws instead; max_moves=3 ends the round
    left = [["9c", "10h", "kh", "qh"], ["ad", "7c", "8c", "6s", "10c", stock[1]], hands[2]]
    points = [pts(h) for h in left]
    rec += [
        {"event": "round", "round": 1, "winner": None, "points": points, "scores": points, "burned": []},
        {"event": "end", "scores": points, "losers": [], "places": sorted_places(points), "rounds": 1},
    ]
    assert errors_of(rec) == []
    bad = copy.deepcopy(rec)
    bad[index_of(bad, event="skip", seat=2)]["seat"] = 1  # seat 1 has only one lost turn
    assert_rejected(bad, "R6.5")


def test_unparsable_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("{not json\n")
    errors = ic.check_file(str(path))
    assert errors and "line 1" in errors[0]


def test_checker_imports_nothing_from_arena():
    """Independence: every module of arena.verify imports only the standard library and its own
    package, so an engine bug cannot leak into the checker that is meant to catch it."""
    modules = sorted(Path(ic.__file__).parent.glob("*.py"))
    assert {m.name for m in modules} >= {"__init__.py", "state.py", "phases.py", "check.py"}
    for module in modules:
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: inside arena.verify only
                    assert node.level == 1, f"{module.name}: from {'.' * node.level}{node.module}"
                    continue
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in sys.stdlib_module_names, f"{module.name} imports {name}"


def test_the_verify_command_uses_only_the_checker():
    """``arena verify`` (arena/cli/verify.py) judges with the checker alone: from arena it
    imports only arena.verify, so the referee's code takes no part in the verdict."""
    command = Path(ic.__file__).parent.parent / "cli" / "verify.py"
    for node in ast.walk(ast.parse(command.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            assert node.level == 2 and (node.module or "").split(".")[0] == "verify", node.module
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert all(n.split(".")[0] in sys.stdlib_module_names for n in names), names
