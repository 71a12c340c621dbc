"""Hostile bots against the secrets of a game: the seeds, other seats' fault details, and the
size of the record (issue 8, items 1 and 7). Part of the hostile suite (tests/sandbox/python/test_hostile.py);
the bots are in tests/sandbox/python/hostile/secrets/ so the generic suite does not seat them.

* seed search: an escaped bot (layer 2 only) searches master seeds 0..10000, 7 and 2026
  for one that explains the numbers its worker holds, and predicts the other hands. With
  no ``--seed`` it predicts at chance; the same machinery predicts every card under the
  old, unkeyed derivation and under a guessable ``--seed`` (which is why that is warned).
* fault snooping: a seat's illegal put names a card it holds; the other seat reads the
  history and must not see it (in-process and sandboxed).
* record bloat: every seat says and prints the most it can; the record grows by less
  than a normal game's size (in-process and sandboxed).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from support.cli import run as run_cli

from arena.cli import main
from arena.game import engine, referee
from arena.game.engine import TABLE_OUTPUT_BYTES, TABLE_SAY_BYTES, record_bytes
from arena.game.referee import DETAIL_BYTES, Referee
from arena.game.rules import CONTEST
from arena.game.seeds import GUESSABLE_BELOW, GameSeeds
from arena.playing import match
from arena.records.files import read_games
from arena.sandbox import Limits, SandboxFactory
from arena.sandbox import seat as sandbox_player
from arena.seats import loader
from arena.seats.factories import make_factory
from arena.seats.loader import load_trusted, resolve_bot
from arena.tournament.backends import games as tournament_worker
from arena.tournament.plan.schedule import Schedule
from arena.trust.botsource import BotSource, read_bot_file
from arena.verify import check_lines

HERE = Path(__file__).parent / "hostile" / "secrets"
SEARCH = HERE / "seed_search.py"
LIMITS = Limits(move_seconds=0.5, game_seconds=10.0, load_seconds=3.0, startup_seconds=30.0)
SHORT = CONTEST.replace(limit=40)


def old_derive(seed: Any, *parts: Any) -> int:
    """The derivation before seeds were keyed: SHA-256 of "seed/part/part", 64 bits."""
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@pytest.fixture
def escaped_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena play``/``tournament`` seat the seed-search bot with layer 1 switched off."""
    real = make_factory

    def factory(src: BotSource, *, trusted: bool = False, limits: Any = None) -> Any:
        if src.path and Path(src.path).name == SEARCH.name:
            return SandboxFactory(src, LIMITS, escaped_for_tests=True)
        return real(src, trusted=trusted, limits=limits)

    monkeypatch.setattr(match, "make_factory", factory)
    monkeypatch.setattr(tournament_worker, "make_factory", factory)


class OldKey:
    """:class:`arena.game.seeds.SeedKey` (the engine's round seeds) under the old derivation."""

    def __init__(self, key: Any) -> None:
        self.key = key

    def derive(self, *parts: Any) -> int:
        return old_derive(self.key, *parts)


@pytest.fixture
def old_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every seed derived as before: unkeyed, bot seeds from the deal seed."""
    for module in (engine, referee, loader, sandbox_player, match):
        if hasattr(module, "derive_seed"):
            monkeypatch.setattr(module, "derive_seed", old_derive)
        if hasattr(module, "seed_key"):  # a key's derivations, made once (seeds.seed_key)
            monkeypatch.setattr(module, "seed_key", OldKey)
    monkeypatch.setattr(engine, "SeedKey", OldKey)
    monkeypatch.setattr(match, "game_seeds", lambda seed, g: GameSeeds(*(old_derive(seed, "play", g),) * 2))
    monkeypatch.setattr(
        Schedule,
        "seeds",
        lambda self, k: GameSeeds(*(old_derive(self.seed, "tournament", k.size, k.table, k.deal) >> 1,) * 2),
    )


def predictions(log: list[dict]) -> dict[str, Any]:
    """What the search bot said in one game, scored against the round-1 deal."""
    seat = next(p["seat"] for p in log[0]["players"] if SEARCH.stem in p["bot"])
    said = [e["text"] for e in log if e["event"] == "say" and e["seat"] == seat and not e.get("output")]
    deal = next(e for e in log if e["event"] == "deal")
    hits = tries = 0
    for line in said:
        if line.startswith("PRED "):
            _, other, *cards = line.split()
            tries += len(cards)
            hits += len(set(cards) & set(deal["hands"][int(other)]))
    found = [line for line in said if line.startswith("FOUND")]
    return {
        "found": found[0] if found else None,
        "hits": hits,
        "tries": tries,
        "bigints": [int(line.split()[1]) for line in said if line.startswith("BIGINT")],
        "notfound": "NOTFOUND" in said,
    }


def play_search(tmp_path: Path, capsys: pytest.CaptureFixture[str], *seed: str, games: int = 8) -> tuple[dict, list]:
    record = tmp_path / f"search{'-'.join(seed)}.jsonl"
    code = main(
        [
            "play",
            str(SEARCH),
            "greedy",
            "--games",
            str(games),
            "-q",
            "--json",
            "--rule",
            "limit=40",
            # the search is the attack, not the subject of the limits: room for it on a loaded machine
            "--move-time",
            "10",
            "--game-time",
            "120",
            "--replay",
            str(record),
            *(["--seed", *seed] if seed else []),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    games_seen = [predictions(log) for log in read_games(record)]
    faults = [e for log in read_games(record) for e in log if e["event"] == "fault"]
    assert not faults, faults  # the attack plays clean games: a fault would hide what it learned
    for log in read_games(record):
        assert check_lines(log) == []
    return {"doc": json.loads(out), "err": err}, games_seen


def chance(games_seen: list[dict]) -> float:
    """Base rate of a guessed card being in a given other hand: 5 of the 30 cards unseen."""
    return 5 / 30


# -- seed search -------------------------------------------------------------------------------


def test_seed_search_finds_nothing_without_a_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], escaped_search: None
) -> None:
    result, games_seen = play_search(tmp_path, capsys)
    master = result["doc"]["seed"]
    assert master >= GUESSABLE_BELOW  # a fresh secret, shown only now, after the games
    # A game can end before the bot's first move (the opener sheds its hand, limit 40): it then
    # says nothing. The secret seeds are fresh each run, so count only the games it spoke in.
    spoke = [g for g in games_seen if g["notfound"] or g["found"] or g["tries"]]
    assert len(spoke) >= 6, games_seen
    assert all(g["notfound"] and g["found"] is None for g in spoke), spoke
    hits, tries = sum(g["hits"] for g in spoke), sum(g["tries"] for g in spoke)
    assert tries == len(spoke) * 5
    # chance is ~1/6 (6.7 hits of 40); 17 or more has a probability under 1e-4 by chance
    assert hits / tries < chance(games_seen) + 0.25, (hits, tries)
    # and nothing in the worker's process holds the master seed (a fork of the referee would);
    # the scan itself works: it finds the big constants the worker's modules hold
    assert all(GUESSABLE_BELOW in g["bigints"] and master not in g["bigints"] for g in spoke)


def test_seed_search_machinery_predicts_every_card_under_the_old_scheme(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], escaped_search: None, old_scheme: None
) -> None:
    result, games_seen = play_search(tmp_path, capsys, "2026")
    assert all(g["found"] == "FOUND 2026 old" for g in games_seen), games_seen
    assert all(g["hits"] == g["tries"] == 5 for g in games_seen)


def test_seed_search_predicts_every_card_with_a_guessable_seed_so_it_is_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], escaped_search: None
) -> None:
    result, games_seen = play_search(tmp_path, capsys, "7")
    assert all(g["found"] == "FOUND 7 new" for g in games_seen), games_seen
    assert all(g["hits"] == g["tries"] == 5 for g in games_seen)
    warning = [line for line in result["err"].splitlines() if "guessable" in line]
    assert len(warning) == 1 and warning[0].startswith("arena: warning: --seed 7 is guessable")


def tournament_search(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, *seed: str) -> list[dict]:
    folder = tmp_path / name
    code, out, err = run_cli(
        capsys,
        "tournament",
        str(SEARCH),
        "greedy",
        "--players",
        "2",
        "--games",
        "3",
        "--workers",
        "1",
        "--rule",
        "limit=40",
        "--db",
        str(tmp_path / f"{name}.sqlite"),
        "--replays",
        str(folder),
        "-q",
        "--json",
        *(["--seed", *seed] if seed else []),
    )
    assert code == 0, err
    logs = [next(read_games(path)) for path in sorted(folder.glob("*.jsonl"))]
    assert len(logs) == 6
    return [predictions(log) for log in logs]


def test_seed_search_in_a_tournament(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], escaped_search: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tournament_search(tmp_path, capsys, "fresh")
    # As in test_seed_search_finds_nothing_without_a_seed: a game of a fresh secret seed can end
    # before the bot's first move (the opener sheds its hand), and the bot then says nothing.
    spoke = [g for g in fresh if g["notfound"] or g["found"] or g["tries"]]
    assert len(spoke) >= 4, fresh
    assert all(g["notfound"] and g["found"] is None for g in spoke), spoke
    assert sum(g["hits"] for g in spoke) / sum(g["tries"] for g in spoke) < 1 / 6 + 0.3
    weak = tournament_search(tmp_path, capsys, "weak", "2026")
    assert all(g["found"] == "FOUND 2026 new" and g["hits"] == 5 for g in weak), weak


def test_seed_search_in_a_tournament_under_the_old_scheme(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], escaped_search: None, old_scheme: None
) -> None:
    old = tournament_search(tmp_path, capsys, "old", "7")
    assert all(g["found"] == "FOUND 7 old" and g["hits"] == 5 for g in old), old


# -- the seed on the command line -------------------------------------------------------------


def test_play_without_seed_shows_the_fresh_seed_after_the_games_and_it_replays(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "play", "random", "greedy", "--games", "4", "-q")
    assert code == 0
    line = err.strip().splitlines()[-1]
    assert line.startswith("seed ") and "guessable" not in err
    seed = int(line.split()[1])
    assert seed >= GUESSABLE_BELOW
    again = run_cli(capsys, "play", "random", "greedy", "--games", "4", "-q", "--seed", str(seed))
    assert again[0] == 0 and again[1] == out and again[2] == ""  # same games; a given seed is not shown again
    other = run_cli(capsys, "play", "random", "greedy", "--games", "4", "-q", "--json")
    assert json.loads(other[1])["seed"] not in (seed,) and other[2] == ""  # JSON holds it: no stderr line


def test_guessable_seed_is_warned_once_only_when_sandboxed_bots_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "plain.py"
    bot.write_text(resolve_bot("random").source)
    for seed, warned in (
        ("7", True),
        ("2026", True),
        (str(2**128 - 1), True),
        (str(-(2**200)), False),
        (str(2**128), False),
    ):
        code, _, err = run_cli(capsys, "play", str(bot), "greedy", "--games", "1", "-q", "--seed", seed)
        assert code == 0
        lines = [line for line in err.splitlines() if "guessable" in line]
        assert len(lines) == (1 if warned else 0), (seed, err)
    code, _, err = run_cli(capsys, "play", "random", "greedy", "--games", "1", "-q", "--seed", "7")
    assert code == 0 and "guessable" not in err  # reference bots only: trusted, nothing to search
    code, _, err = run_cli(capsys, "play", str(bot), "greedy", "--games", "1", "-q", "--seed", "7", "--trusted")
    assert code == 0 and "guessable" not in err


def test_tournament_secret_seed_is_stored_resumed_and_shown_only_after_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil
    import sqlite3

    db = tmp_path / "t.sqlite"
    argv = [
        "tournament",
        "greedy",
        "random",
        "heuristic",
        "--players",
        "2",
        "--games",
        "2",
        "--workers",
        "1",
        "--rule",
        "limit=40",
    ]
    code, out, err = run_cli(capsys, *argv, "--db", str(db))
    assert code == 0, err
    assert "a secret seed (shown after the run)" in err and "guessable" not in err
    seed = int(err.strip().splitlines()[-1].split()[1])
    assert seed >= GUESSABLE_BELOW and str(seed) not in err.split("\n")[0]
    full = json.loads(run_cli(capsys, "standings", "--db", str(db), "--json")[1])
    assert full["settings"]["seed"] == seed  # complete: the organiser's JSON shows it
    # a partial copy: the seed is hidden, and a resume without --seed finishes the same games
    part = tmp_path / "part.sqlite"
    shutil.copy(db, part)
    with sqlite3.connect(part) as conn:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:  # every per-game table (results, faults, seat times...)
            if "game_id" in [col[1] for col in conn.execute(f"PRAGMA table_info({table})")]:
                conn.execute(f"DELETE FROM {table} WHERE game_id > 3")
        conn.execute("DELETE FROM games WHERE id > 3")
    partial = json.loads(run_cli(capsys, "standings", "--db", str(part), "--json")[1])
    assert partial["settings"]["seed"] == "hidden until every game is played"
    assert str(seed) not in json.dumps(partial)
    code, out, err = run_cli(capsys, *argv, "--db", str(part), "--json")
    assert code == 0, err
    resumed = json.loads(out)
    assert resumed["settings"]["seed"] == seed
    assert resumed["overall"] == full["overall"]
    # the same seed given again in a new database plays the same games
    code, out, err = run_cli(capsys, *argv, "--db", str(tmp_path / "again.sqlite"), "--seed", str(seed), "--json")
    assert code == 0 and json.loads(out)["overall"] == full["overall"]


def test_replay_for_one_seat_hides_the_seed_and_other_seats_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "r.jsonl"
    log = snooping_game(trusted=True)
    record.write_text("".join(json.dumps(e) + "\n" for e in log))
    faulter = FAULTER_SEAT
    seed = str(log[0]["seed"])
    code, full, _ = run_cli(capsys, "replay", str(record))
    assert code == 0 and seed in full and "IllegalMove" in full
    for seat in (0, 1):
        code, view, _ = run_cli(capsys, "replay", str(record), "--seat", str(seat))
        assert code == 0 and seed not in view and "seed" not in view.splitlines()[0]
        assert ("IllegalMove" in view) == (seat == faulter)
        assert "FAULT" in view


# -- fault snooping -------------------------------------------------------------------------

FAULTER_SEAT = 0
GAME_SEED = 4114989302374225189
FAULTER = HERE / "fault_faulter.py"
SNOOPER = HERE / "fault_snooper.py"


def snooping_game(*, trusted: bool, mixed: bool = False) -> list[dict]:
    """The faulter at seat 0 and the snooper at seat 1, in-process, sandboxed, or one of each."""
    faulter_src, snooper_src = read_bot_file(FAULTER), read_bot_file(SNOOPER)
    factories = [
        load_trusted(faulter_src) if trusted else SandboxFactory(faulter_src, LIMITS),
        load_trusted(snooper_src) if trusted != mixed else SandboxFactory(snooper_src, LIMITS),
    ]
    players = [factories[s](5, s) for s in range(2)]
    try:
        return Referee(SHORT).play(players, seed=GAME_SEED).log
    finally:
        for p in players:
            p.close()
        for f in factories:
            close = getattr(f, "close", None)
            if close:
                close()


@pytest.mark.parametrize(
    "trusted,mixed",
    [(True, False), (False, False), (True, True), (False, True)],
    ids=["in-process", "sandboxed", "sandboxed-snooper", "in-process-snooper"],
)
def test_fault_details_do_not_reach_other_seats(trusted: bool, mixed: bool) -> None:
    log = snooping_game(trusted=trusted, mixed=mixed)
    assert check_lines(log) == []
    faults = [e for e in log if e["event"] == "fault" and e["seat"] == FAULTER_SEAT and e["kind"] == "exception"]
    assert faults and all("IllegalMove" in f["detail"] for f in faults)  # the organiser's record keeps them
    named = {w for f in faults for w in f["detail"].replace(";", " ").split() if len(w) in (2, 3) and w[-1] in "schd"}
    said = [e["text"] for e in log if e["event"] == "say" and e["seat"] == 1 - FAULTER_SEAT]
    seen = [t for t in said if t.startswith("SAW ")]
    assert seen, said  # the snooper did see the faults: their seat and kind
    assert {tuple(t.split()[1:]) for t in seen} == {
        (str(FAULTER_SEAT), "exception", "-"),
        (str(FAULTER_SEAT), "retired", "-"),
    }, seen
    assert not [t for t in said if t.startswith("LEAK")], said
    assert named and not any(card in " ".join(seen) for card in named)


# -- record bloat ---------------------------------------------------------------------------

BLOAT = HERE / "record_bloat.py"


def size(log: list[dict]) -> int:
    return sum(record_bytes(e) for e in log)


@pytest.fixture(scope="module")
def normal_sizes() -> dict[int, int]:
    """Median record bytes of a game of reference bots, per table size (the yardstick)."""
    bots = [load_trusted(resolve_bot(name)) for name in ("greedy", "heuristic", "random")]
    sizes = {}
    for n in range(2, 7):
        runs = [
            size(Referee(CONTEST).play([bots[(s + g) % 3](g, s) for s in range(n)], seed=100 + g).log)
            for g in range(15)
        ]
        sizes[n] = int(statistics.median(runs))
    return sizes


def bloat_game(n: int, *, sandboxed: bool) -> list[dict]:
    src = read_bot_file(BLOAT)
    factory: Any = SandboxFactory(src, LIMITS) if sandboxed else load_trusted(src)
    players = [factory(9, s) for s in range(n)]
    try:
        return Referee(CONTEST).play(players, seed=GAME_SEED + n).log
    finally:
        for p in players:
            p.close()
        if sandboxed:
            factory.close()


def check_bloat(log: list[dict], n: int, normal: int) -> None:
    assert log[-1]["event"] == "end" and check_lines(log) == []
    says = [e for e in log if e["event"] == "say"]
    faults = [e for e in log if e["event"] == "fault"]
    said = sum(record_bytes(e) for e in says if not e.get("output"))
    printed = sum(record_bytes(e) for e in says if e.get("output"))
    assert said <= TABLE_SAY_BYTES and printed <= TABLE_OUTPUT_BYTES
    assert all(len(json.dumps(f["detail"])) <= DETAIL_BYTES for f in faults)
    marks = [e for e in says if e.get("capped")]
    assert len([m for m in marks if not m.get("output")]) == n  # each seat's say cap, marked once
    extra = said + printed + sum(record_bytes(f) for f in faults)
    # the record is its game's moves plus at most one more normal game's worth of text: under 2x
    assert extra < normal, (n, extra, normal)


@pytest.mark.parametrize("n", range(2, 7))
def test_record_bloat_in_process(n: int, normal_sizes: dict[int, int], capsys: pytest.CaptureFixture[str]) -> None:
    log = bloat_game(n, sandboxed=False)
    capsys.readouterr()  # trusted bots print to the terminal, not to the record
    check_bloat(log, n, normal_sizes[n])


@pytest.mark.parametrize("n", [2, 6])
def test_record_bloat_sandboxed(n: int, normal_sizes: dict[int, int]) -> None:
    log = bloat_game(n, sandboxed=True)
    check_bloat(log, n, normal_sizes[n])
    marks = [e for e in log if e["event"] == "say" and e.get("capped") and e.get("output")]
    assert len(marks) == n  # each seat's output cap, marked once
