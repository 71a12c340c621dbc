"""arena view / report / replay --db and the browser seat's server, without a browser."""

from __future__ import annotations

import http.client
import json
import re
import sqlite3
from pathlib import Path

import pytest
from support.cli import arena_here as arena

from arena import play as play_match
from arena.records.files import read_games
from arena.web.seat import BadAction, SeatState, check_action
from arena.web.serve import SeatServer
from arena.web.view import embed_json, seat_view


def test_embedded_json_cannot_close_its_script_element():
    text = embed_json({"say": "</script><!-- <script>alert(1)</script> & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"say": "</script><!-- <script>alert(1)</script> & \\u2028"}  # shown, not a line end


def test_seat_view_keeps_only_what_the_seat_saw(tmp_path):
    path = tmp_path / "g.jsonl"
    play_match(["greedy", "random", "heuristic"], games=1, seed=3, record_file=str(path), trusted=True)
    events = next(read_games(path))
    shown = seat_view(events, 1)
    assert "seed" not in shown[0]
    for e, v in zip(events, shown, strict=False):
        if e["event"] == "deal":
            assert v["hands"] == [h if s == 1 else len(h) for s, h in enumerate(e["hands"])]
            assert v["stock"] == len(e["stock"])
        elif e["event"] in ("draw", "penalty"):
            assert ("card" in v) == (e["seat"] == 1)
        elif e["event"] == "reshuffle":
            assert v["stock"] == len(e["stock"])


def test_view_never_overwrites_a_file_it_did_not_write(tmp_path):
    path = tmp_path / "g.jsonl"
    play_match(["greedy", "random"], games=2, seed=1, record_file=str(path), trusted=True)
    mine = arena("view", str(path), cwd=tmp_path)
    assert mine.returncode == 0 and (tmp_path / "g.html").exists()
    assert arena("view", str(path), cwd=tmp_path).returncode == 0  # its own page: rewritten
    foreign = tmp_path / "notes.html"
    foreign.write_text("my notes")
    done = arena("view", str(path), "--out", str(foreign), cwd=tmp_path)
    assert done.returncode == 2 and "was not written by arena" in done.stderr and "Traceback" not in done.stderr
    assert foreign.read_text() == "my notes"
    for bad, message in (
        (["nothere.jsonl"], "no such file"),
        ([str(path), "--seat", "5"], "has seats 0 to 1"),
        ([str(path), "--game", "9"], "no game with id"),
    ):
        done = arena("view", *bad, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr and done.stderr.count("\n") == 1


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("t")
    (folder / "bots").mkdir()
    (folder / "bots" / "counter.py").write_text((Path(__file__).parents[2] / "examples" / "counter.py").read_text())
    done = arena(
        "tournament",
        "greedy",
        "random",
        "bots/counter.py",
        "-k",
        "3",
        "-n",
        "1",
        "-j",
        "1",
        "--db",
        "t.sqlite",
        "-q",
        "--json",
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    return folder


def test_database_stores_sources_and_move_times(tournament):
    conn = sqlite3.connect(tournament / "t.sqlite")
    shas = {sha for (sha,) in conn.execute("SELECT sha256 FROM bots")}
    assert {sha for (sha,) in conn.execute("SELECT sha256 FROM sources")} == shas
    assert conn.execute("SELECT COUNT(*), MIN(moves) FROM seat_times").fetchone()[0] == 9
    conn.close()


def test_replay_from_the_database_is_checked_against_the_stored_result(tournament, tmp_path):
    import shutil

    done = arena("replay", "--db", "t.sqlite", "--game", "3p-t0-d0-r2", cwd=tournament)
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(tournament / "t.sqlite")
    (score,) = conn.execute(
        "SELECT r.score FROM results r JOIN games g ON g.id = r.game_id WHERE g.game_key = '3p-t0-d0-r2' AND r.seat = 0"
    ).fetchone()
    conn.close()
    assert f"scores [{score}," in done.stdout.splitlines()[-1]
    # a database whose stored result is not what the game gives: the re-play says so
    shutil.copy(tournament / "t.sqlite", tmp_path / "t.sqlite")
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    conn.execute(
        "UPDATE results SET score = score + 1 WHERE seat = 0 AND game_id = "
        "(SELECT id FROM games WHERE game_key = '3p-t0-d0-r2')"
    )
    conn.commit()
    conn.close()
    done = arena("replay", "--db", "t.sqlite", "--game", "3p-t0-d0-r2", cwd=tmp_path)
    assert done.returncode == 2 and "differs from the stored result" in done.stderr
    for key, message in (("3p-t5-d0-r0", "no such game"), ("x", "not a game key")):
        done = arena("replay", "--db", "t.sqlite", "--game", key, cwd=tournament)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_report_writes_a_site_and_never_into_a_foreign_folder(tournament):
    done = arena("report", "--db", "t.sqlite", "--out", "site", "-j", "1", "-q", cwd=tournament)
    assert done.returncode == 0, done.stderr
    site = tournament / "site"
    assert {"index.html", "games.html", "viewer.html"} <= {p.name for p in site.iterdir()}
    assert len(list((site / "games").glob("*.js"))) == 3 and len(list((site / "bots").glob("*.html"))) == 3
    assert arena("report", "--db", "t.sqlite", "--out", "site", "-q", cwd=tournament).returncode == 0  # again
    other = tournament / "bots"
    done = arena("report", "--db", "t.sqlite", "--out", str(other), cwd=tournament)
    assert done.returncode == 2 and "holds other files" in done.stderr
    assert [p.name for p in other.iterdir()] == ["counter.py"]


def test_seat_actions_are_checked_for_shape():
    checked = check_action({"action": "put", "card": "10H", "suit": None})
    assert checked == {"action": "put", "card": "10h", "suit": None}
    for bad in (
        {"action": "shoot"},
        {"action": "put", "card": "1x"},
        {"action": "put", "card": "jd", "suit": "x"},
        ["draw"],
        None,
    ):
        with pytest.raises(BadAction):
            check_action(bad)


def test_seat_server_wants_its_token_loopback_host_and_json():
    shared = SeatState()
    server = SeatServer(shared)
    server.start()
    try:
        host, port = server.server_address[:2]

        def ask(method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> int:
            conn = http.client.HTTPConnection(host, port, timeout=5)
            conn.request(method, path, body=body, headers=headers or {})
            status = conn.getresponse().status
            conn.close()
            return status

        token = server.token
        assert ask("GET", f"/{token}/") == 200
        assert ask("GET", "/") == 404
        wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one character off (never the token itself)
        assert ask("GET", f"/{wrong}/state") == 404
        assert ask("GET", f"/{token}/", headers={"Host": "evil.example:80"}) == 403  # DNS rebinding
        assert ask("POST", f"/{token}/act", b'{"action": "draw"}', {"Content-Type": "text/plain"}) == 415
        assert ask("POST", f"/{token}/act", b'{"action": "eat"}', {"Content-Type": "application/json"}) == 400
        assert ask("POST", f"/{token}/act", b"x" * 5000, {"Content-Type": "application/json"}) == 413
        assert ask("POST", f"/{token}/act", b'{"action": "draw"}', {"Content-Type": "application/json"}) == 202
        assert shared.actions.get_nowait() == {"action": "draw"}
    finally:
        server.stop()


def test_web_refuses_without_one_human(tmp_path):
    done = arena("play", "greedy", "random", "--web", cwd=tmp_path)
    assert done.returncode == 2 and "--web seats one person" in done.stderr


def test_sources_with_undecodable_bytes_come_back_as_read(tmp_path):
    """A bot file that is not UTF-8 (kept as surrogate escapes) is stored and read back exactly."""
    from arena.tournament.db.database import BotRow, TournamentDB, open_readonly, read_sources
    from arena.tournament.plan.schedule import Schedule
    from arena.trust.botsource import BotSource

    texts = ["name = 'caf\udce9'\n", "x = 1\n"]
    srcs = [BotSource(f"b{i}", t) for i, t in enumerate(texts)]
    rows = [BotRow(i, f"b{i}", f"b{i}", None, "file", s.sha256) for i, s in enumerate(srcs)]
    db = TournamentDB.open(
        tmp_path / "t.sqlite",
        {"seed": 1},
        rows,
        Schedule.build(2, [2], deals=1, seed=1),
        sources={s.sha256: s.source for s in srcs},
    )
    db.close()
    conn, _ = open_readonly(tmp_path / "t.sqlite")
    assert read_sources(conn) == {s.sha256: s.source for s in srcs}
    conn.close()


def test_report_names_the_authors_of_submitted_bots(tmp_path):
    bot = tmp_path / "counter.py"
    bot.write_text((Path(__file__).parents[2] / "examples" / "counter.py").read_text())
    done = arena("submit", str(bot), "--to", "subs", "--author", "Ada <b>L</b>", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        arena(
            "tournament", "subs", "greedy", "-k", "2", "-n", "1", "-j", "1", "--db", "t.sqlite", "-q", cwd=tmp_path
        ).returncode
        == 0
    )
    assert arena("report", "--db", "t.sqlite", "--out", "site", "-q", "-j", "1", cwd=tmp_path).returncode == 0
    page = (tmp_path / "site" / "bots" / "bot-0.html").read_text()
    assert "Ada &lt;b&gt;L&lt;/b&gt;" in page


# -- the browser seat's rough edges (issue 18, item 9) ------------------------------------

#: What only a terminal can do: typed commands, help, the numbered menu.
TERMINAL_ONLY = re.compile(r"\? for help|\bq to leave|type a card number|\bd to draw|\bf to finish|your choice>")


def test_the_web_seats_messages_hold_no_terminal_help(scripted_game):
    from arena.botapi.turn import Turn
    from arena.game.referee import EngineTable, GameInfo
    from arena.game.rules import CONTEST
    from arena.web.seat import WebHumanPlayer

    game = scripted_game(["9s kc", "kd qd"], stock="qs qc", opening="9h", first_move=False)
    shared = SeatState()
    shown: list[str] = []
    publish = shared.publish

    def keep(**changes):
        shown.extend(m for m in changes.get("messages", ()) if m not in shown)
        publish(**changes)

    shared.publish = keep  # every message the page was given
    player = WebHumanPlayer(0, shared)
    player.start_game(GameInfo(0, ("human", "greedy"), CONTEST, "1"))
    assert shown and shown[0].startswith("Game 1:")
    shared.send({"action": "put", "card": "kc"})  # refused (R4.2): the refusal is a message
    shared.send({"action": "put", "card": "9s"})
    player.move(Turn(game.move, EngineTable(game, 0, ("human", "greedy"))))
    shown += player.lines
    assert any("not allowed: R4.2" in m and "K\u2663 does not" in m for m in shown), shown
    assert not [m for m in shown if TERMINAL_ONLY.search(m)], shown


def test_a_web_move_that_ends_by_itself_shows_the_hand_at_once(scripted_game):
    from arena.botapi.turn import Turn
    from arena.game.referee import EngineTable, GameInfo
    from arena.game.rules import CONTEST
    from arena.web.seat import WebHumanPlayer

    # The opening kh is seat 0's put; no other king: no question is asked in this move.
    game = scripted_game(["7s 9c", "kd qd"], stock="qs", opening="kh")
    shared = SeatState()
    player = WebHumanPlayer(0, shared)
    player.start_game(GameInfo(0, ("human", "greedy"), CONTEST, "1"))
    assert shared.state["hand"] == []
    turn = Turn(game.move, EngineTable(game, 0, ("human", "greedy")))
    player.move(turn)
    assert turn.finished and shared.actions.empty()
    assert shared.state["hand"] == ["7s", "9c"]
    assert shared.state["events"][-1]["event"] == "put"  # the opening card, its events with it


def test_a_jack_put_from_the_page_asks_its_suit_with_the_pages_buttons_only(scripted_game):
    # The terminal's numbered suit menu ("J♣ orders a suit (R6.4): 1) ♠ spades ...") was said as
    # the page's message when the page sent a jack without its suit; the page asks with its buttons.
    from arena.botapi.turn import Turn
    from arena.game.referee import EngineTable, GameInfo
    from arena.game.rules import CONTEST
    from arena.web.seat import WebHumanPlayer

    game = scripted_game(["jc 9s", "kd qd"], stock="qs qc", opening="9h", first_move=False)
    shared = SeatState()
    asked: list[str] = []
    publish = shared.publish

    def keep(**changes):
        if changes.get("phase") == "move":
            asked.append(changes.get("prompt", ""))
        publish(**changes)

    shared.publish = keep
    player = WebHumanPlayer(0, shared)
    player.start_game(GameInfo(0, ("human", "greedy"), CONTEST, "1"))
    shared.send({"action": "put", "card": "jc", "suit": None})  # a jack with no suit: its suit is asked
    shared.send({"action": "draw"})  # no suit: asked again
    shared.send({"action": "put", "card": "jc", "suit": "d"})  # a suit button
    turn = Turn(game.move, EngineTable(game, 0, ("human", "greedy")))
    player.move(turn)
    assert asked[:3] == ["choice", "suit", "suit"] and turn.suit == "d"
    assert not [m for m in player.lines if "orders a suit" in m or "1)" in m], player.lines
