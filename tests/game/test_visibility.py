"""R10 in one place (issue 18, item 4): every view of a seat agrees with arena.game.visibility.

Games of 2 to 6 seats with faults, says, printed output, draws, effect draws and
reshuffles; for every seat, each view (a bot's ``turn.history``, what a sandboxed
seat is sent, ``arena replay --seat``, ``arena view --seat``, the human seats'
news) shows what :func:`arena.game.visibility.seen_by` answers, and the secrets of
the other seats (marked so that they can be searched for) appear in none of them.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from arena.game.referee import GameInfo, Referee
from arena.game.rules import Rules
from arena.game.visibility import ORGANISER, PUBLIC, game_seen_by, seat_data, seen_by
from arena.playing.human import HumanPlayer
from arena.records.files import format_game
from arena.seats.loader import load_trusted, resolve_bot
from arena.web.seat import plain as plain_history
from arena.web.view import seat_view

ROOT = Path(__file__).resolve().parents[2]
GREEDY = load_trusted(resolve_bot("greedy"))


def as_json(value: Any) -> Any:
    """Data as a page or a record holds it (tuples and lists alike)."""
    return json.loads(json.dumps(value))


def secret(kind: str, seat: int, k: int) -> str:
    return f"SECRET-{kind}-{seat}-{k}"


class Chatty:
    """Greedy, and every few moves: a say, a printed line (written as a sandboxed seat's
    output is), an exception after acting, or a move left unfinished. It keeps the
    history it read at each move with the number of events logged by then."""

    def __init__(self, seat: int, rng: random.Random, logged: list[int]) -> None:
        self.inner = GREEDY(0, seat)
        self.name = f"chatty{seat}"
        self.rng = rng
        self.logged = logged
        self.reads: list[tuple[int, list[dict[str, Any]]]] = []
        self.k = 0

    def start_game(self, info: GameInfo) -> None:
        self.inner.start_game(info)

    def move(self, turn: Any) -> None:
        self.reads.append((self.logged[0], plain_history(turn.history)))
        self.k += 1
        roll = self.rng.random()
        if roll < 0.15:
            turn.say(f"say {self.k} 9h")
        elif roll < 0.25:  # printed output, as the referee records a sandboxed seat's print()
            turn._table.game.say(turn.seat, secret("out", turn.seat, self.k), output=True)
        self.inner.move(turn)
        if roll > 0.97:
            raise ValueError(secret("fault", turn.seat, self.k))

    def end_round(self, result: Any) -> None:
        pass

    def end_game(self, result: Any) -> None:
        pass

    def close(self) -> None:
        pass


def play(n: int, seed: int) -> tuple[list[dict[str, Any]], list[Chatty]]:
    logged = [0]

    def count(event: dict[str, Any]) -> None:
        logged[0] += 1

    rng = random.Random(seed)
    players = [Chatty(s, rng, logged) for s in range(n)]
    outcome = Referee(Rules(limit=60), max_faults=99, on_event=count).play(players, seed=seed)
    return outcome.log, players


@pytest.fixture(scope="module")
def games() -> list[tuple[list[dict[str, Any]], list[Chatty]]]:
    played = [play(n, seed) for n in range(2, 7) for seed in (n,)]
    kinds = {e["event"] for log, _ in played for e in log} | {
        "output" for log, _ in played for e in log if e.get("output")
    }
    # the games hold every kind of event R10 hides part of (so no check below is vacuous)
    assert {"deal", "draw", "penalty", "reshuffle", "fault", "say", "output"} <= kinds, kinds
    return played


def test_a_bots_history_at_every_move_is_the_public_view_of_the_log_so_far(games):
    for log, players in games:
        for p in players:
            assert p.reads
            for logged, read in p.reads:
                assert read == as_json(game_seen_by(log[:logged], PUBLIC))


def test_every_seat_view_of_a_record_is_the_visibility_modules_answer(games):
    for log, _ in games:
        n = len(log[0]["players"])
        assert game_seen_by(log, ORGANISER) == log
        for seat in range(n):
            seen = game_seen_by(log, seat)
            assert seat_view(log, seat) == seen  # arena view --seat
            assert list(format_game(log, seat=seat)) == list(format_game(seen))  # arena replay --seat
            # a seat sees the public part of every event, and more only of its own
            for e in log:
                if seat_data(e, seat) != seen_by(e, PUBLIC):
                    assert e.get("seat") == seat or e["event"] == "deal", e


def hidden_texts(log: list[dict[str, Any]], seat: int) -> set[str]:
    """The marked secrets of the seats other than ``seat`` (printed lines, fault details)."""
    out = set()
    for e in log:
        if e.get("seat") not in (None, seat) and e["event"] in ("say", "fault"):
            out |= set(re.findall(r"SECRET-\w+-\d+-\d+", json.dumps(e)))
    return out


def test_no_view_of_a_seat_shows_another_seats_secrets(games):
    for log, _ in games:
        n = len(log[0]["players"])
        for seat in range(n):
            hidden = hidden_texts(log, seat)
            text = "\n".join(format_game(log, seat=seat))
            page = json.dumps(seat_view(log, seat))
            human = HumanPlayer(seat, show=lambda _: None, symbols=False)
            human.names = tuple(p["name"] for p in log[0]["players"])
            news = "\n".join(human.news(game_seen_by(log, PUBLIC)))
            for where in (text, page, news):
                assert not [s for s in hidden if s in where]
            assert "seed" not in json.loads(page)[0]
            # other seats' hands are counts, their draws unnamed; its own are named
            for line in text.splitlines():
                m = re.match(r"\s+chatty(\d)#\d: (.*)$", line)
                if m and "cards" in m.group(2) and m.group(2).split()[0].isdigit():
                    assert int(m.group(1)) != seat
                m = re.match(r"\s+chatty(\d)#\d draws (.*) \(", line)
                if m:
                    assert (m.group(2) == "a card") == (int(m.group(1)) != seat), line
            own = {s for s in re.findall(r"SECRET-\w+-(\d)-\d+", json.dumps(log)) if int(s) == seat}
            if own:
                assert re.search(rf"SECRET-\w+-{seat}-\d+", text)


def test_a_viewer_is_a_seat_the_public_or_the_organiser():
    event = {"event": "draw", "seat": 1, "card": "9h"}
    assert seen_by(event, 1) == event and seen_by(event, 0) == {"event": "draw", "seat": 1}
    assert seen_by(event, PUBLIC) == {"event": "draw", "seat": 1} and seen_by(event, ORGANISER) == event
    assert seat_data({"event": "say", "seat": 1, "text": "x", "output": True}, 0) is None
    with pytest.raises(ValueError, match="a viewer is"):
        seen_by(event, "everyone")  # type: ignore[arg-type]


def test_what_a_sandboxed_seat_is_sent_is_the_public_view(monkeypatch):
    from arena.game.referee import EngineTable
    from arena.sandbox.python.factory import SandboxFactory

    sent: list[tuple[int, list[dict[str, Any]], list[dict[str, Any]]]] = []
    real = EngineTable.history_since

    def spy(self: EngineTable, mark: int) -> list[dict[str, Any]]:
        delta = real(self, mark)
        sent.append((len(self.game.log), mark, [dict(e) for e in delta]))
        return delta

    monkeypatch.setattr(EngineTable, "history_since", spy)
    factory = SandboxFactory(resolve_bot(str(ROOT / "examples" / "counter.py")))
    try:
        players = [factory(3, 0), GREEDY(3, 1), GREEDY(3, 2)]
        log = Referee(Rules(limit=40)).play(players, seed=3).log
    finally:
        factory.close()
    assert sent
    for logged, mark, delta in sent:
        assert as_json(delta) == as_json(game_seen_by(log[:logged], PUBLIC)[mark:])
