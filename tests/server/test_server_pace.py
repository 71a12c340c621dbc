"""A ladder that paces itself (issue 30, item 1): tables chosen by what their games would teach, a
pace the organiser sets, slower as ratings settle, a share of the CPU, and pause. The pace is
checked on a simulated clock (exact, whatever the machine's speed); a server started as users start
it shows the pace as a ceiling over a window, and that pause stops new games."""

from __future__ import annotations

import random
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.server import Server, arena, bot_file, token_of, wait_for

from arena.server.ladder import pace
from arena.server.ladder.matchmaker import LadderEntrant, LadderPlayer, pick_table
from arena.server.ladder.rating import START_MU, START_SIGMA
from arena.server.store import database as store


@dataclass(frozen=True)
class V:
    submission: int
    mu: float = START_MU
    sigma: float = START_SIGMA
    games: int = 0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_information_is_highest_for_uncertain_and_close_ratings() -> None:
    new, settled, near, far = V(1), V(2, 25.0, 1.0), V(3, 25.5, 1.0), V(4, 40.0, 1.0)
    assert pace.pair_information(new, V(9)) == pytest.approx(pace.FRESH) == pytest.approx(0.8, abs=0.001)
    assert pace.pair_information(settled, near) < 0.1 * pace.FRESH  # settled pairs teach little
    assert pace.pair_information(settled, far) < pace.pair_information(settled, near)  # far apart: less
    assert pace.pair_information(new, settled) > pace.pair_information(settled, near)  # a new one: much


def test_the_matchmaker_spends_games_where_ratings_are_uncertain_or_close() -> None:
    # Six settled versions close together, and one far below them all, uncertain but surely last:
    # its games would teach nothing. The old matchmaker drew the focus by sigma, so it made the
    # outlier the focus of a third of the tables; now it is left alone.
    close = [LadderEntrant(i, "s", 25.0 + 0.4 * i, 1.0, 300) for i in range(6)]
    outlier = LadderEntrant(9, "x", -10.0, 3.0, 300)
    rng = random.Random(5)
    tables = [pick_table([*close, outlier], rng, largest=2) for _ in range(3000)]
    assert sum(9 in t for t in tables) < 0.02 * len(tables)
    # Two new versions join: they play far more than the settled ones.
    new = [LadderEntrant(30, "n", START_MU, START_SIGMA, 0), LadderEntrant(31, "n", START_MU, START_SIGMA, 2)]
    seen: Counter[int] = Counter()
    for _ in range(3000):
        seen.update(pick_table([*close, outlier, *new], rng, largest=2))
    per_settled = sum(seen[e.submission] for e in close) / len(close)
    assert min(seen[30], seen[31]) > 2 * per_settled


def test_the_pace_is_kept_and_slows_as_ratings_settle() -> None:
    # Three versions at 60 games per bot an hour: 180 seat-games an hour, whatever the table sizes.
    for table, share in (([V(1), V(2), V(3)], 1.0), ([V(1, 25, 1.0), V(2, 25.3, 1.0), V(3, 24.8, 1.0)], 0.1)):
        clock = Clock()
        pacer = pace.Pacer(pace.Pace(60.0), clock)
        played, rng = 0, random.Random(1)
        while clock.now < 1000.0 + 10 * 3600:
            if pacer.ready():
                seats = rng.randint(2, 3)
                pacer.started(seats, 3, pace.table_information(table[:seats]))
                played += seats * seats  # each of the block's games seats each of its versions
                pacer.ended()
            clock.now += 1.0
        per_bot_hour = played / 3 / 10
        assert 60 * share * 0.97 <= per_bot_hour <= 60 * share * 1.03, (share, per_bot_hour)


def test_a_worker_keeps_its_share_of_the_pace_and_of_the_cpu() -> None:
    clock = Clock()
    pacer = pace.Pacer(pace.Pace(0.0, cpu=0.25), clock)  # no pace; busy a quarter of the time
    busy = idle = 0.0
    for _ in range(1000):
        while not pacer.ready():
            clock.now += 0.1
            idle += 0.1
        pacer.started(2, 2, pace.FRESH)
        clock.now += 2.0  # the block takes two seconds
        busy += 2.0
        pacer.ended()
    assert 0.24 <= busy / (busy + idle) <= 0.26
    assert pace.Pace(120.0, share=0.5).wait_after(2, 4, pace.FRESH) == 2 * pace.Pace(120.0).wait_after(2, 4, pace.FRESH)
    assert pace.Pace(0.0).wait_after(6, 2, 0.0) == 0.0  # no pace: no wait


def contest_with_two_bots(tmp: Path) -> tuple[Path, sqlite3.Connection]:
    folder = tmp / "cup"
    store.init_contest(folder, "Pace Cup")
    db = store.open_db(folder)
    for i, name in enumerate(("ann", "bob"), 1):
        store.invite(db, name)
        sid = store.add_submission(db, i, f"{name}bot", bot_file(tmp, f"{name}bot").read_bytes())
        store.finish_check(db, sid, {"clean": True}, None)
    return folder, db


def test_pause_shuts_the_gate_and_resume_opens_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, db = contest_with_two_bots(tmp_path)
    gate = pace.Gate(db, pace.Pacer(pace.Pace(0.0)))
    player = LadderPlayer(db, gate=gate)
    try:
        assert player.play_block(random.Random(1)) > 0
        assert pace.set_paused(db, True) and not pace.set_paused(db, True)
        before = store.games_count(db)
        assert [player.play_block(random.Random(i)) for i in range(5)] == [0] * 5
        assert store.games_count(db) == before
        assert pace.set_paused(db, False)
        assert player.play_block(random.Random(2)) > 0
    finally:
        player.close()
    lines = [line.split(" arena: ", 1)[1] for line in capsys.readouterr().err.splitlines() if " arena: " in line]
    assert lines[0].startswith("ladder: playing, no pace")
    assert lines[1:] == ["ladder: paused by the organiser: no new game until it is resumed", "ladder: resumed"]
    assert [e["text"] for e in reversed(store_events(db))] == lines  # the desk reads the same lines
    db.close()


def store_events(db: sqlite3.Connection) -> list[dict[str, Any]]:
    from arena.server.store import events

    return events.recent(db, 0)


@pytest.mark.long
def test_a_served_ladder_keeps_its_pace_and_pause_stops_new_games(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    token_of(arena("contest", "init", str(folder)).stdout.splitlines()[-1])
    tokens = [token_of(arena("contest", "invite", str(folder), n).stdout) for n in ("ann", "bob")]
    # 3600 games per bot an hour: with two bots, at most one game a second (tables of two).
    server = Server(folder, "--pace", "3600")
    server.start()
    try:
        for name, token in zip(("annbot", "bobbot"), tokens, strict=True):
            done = arena("submit", str(bot_file(tmp_path, name)), "--server", server.url, "--token", token)
            assert done.returncode == 0, done.stderr
        wait_for(lambda: games(folder) >= 2, "the ladder to play")
        start_count, start = games(folder), time.monotonic()
        time.sleep(20)
        played, seconds = games(folder) - start_count, time.monotonic() - start
        ceiling = 3600 * 2 / 2 * seconds / 3600  # bot-games an hour / seats a game
        assert 0 < played <= ceiling * 1.2 + 2, (played, ceiling)  # the old ladder: hundreds
        assert arena("contest", "pause", str(folder)).returncode == 0
        wait_for(lambda: ladder_state(folder) == "paused", "the ladder to say it paused")
        time.sleep(1.0)  # the block it was playing, if any, ends
        paused_at = games(folder)
        time.sleep(6)
        assert games(folder) == paused_at
        done = arena("contest", "resume", str(folder))
        assert done.returncode == 0 and "resumed" in done.stdout
        wait_for(lambda: games(folder) > paused_at, "the ladder to play again")
    finally:
        err = server.stop()
    assert "ladder: paused by the organiser" in err and "ladder: resumed" in err


def games(folder: Path) -> int:
    with sqlite3.connect(f"file:{folder / 'contest.db'}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


def ladder_state(folder: Path) -> str:
    import json

    with sqlite3.connect(f"file:{folder / 'contest.db'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT value FROM contest WHERE key = 'ladder_state'").fetchone()
    return str(json.loads(row[0])["state"]) if row else ""
