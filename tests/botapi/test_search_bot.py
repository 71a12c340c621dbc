"""bots/search.py's game value at two seats and its bound on a game's CPU (issue 22)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from arena.botapi.rollout import heuristic
from arena.botapi.turn import PublicFeed, Turn
from arena.game.engine import Game
from arena.game.referee import EngineTable
from arena.seats.loader import load_trusted, resolve_bot

SEARCH = Path(__file__).resolve().parents[2] / "bots" / "search.py"


def search_bot(playouts: int) -> Any:
    """A fresh ``search`` as the referee makes it (its module globals reachable through its methods)."""
    bot = load_trusted(resolve_bot(str(SEARCH)))(7, 0).bot
    bot.playouts = playouts
    return bot


def names(bot: Any) -> dict[str, Any]:
    return bot.move.__globals__  # type: ignore[no-any-return]


def turn_at(n: int, seed: int, moves: int) -> tuple[Game, Turn]:
    """A heuristic game's first round at the move of any seat after ``moves`` moves."""
    game = Game(n, seed=seed)
    game.start_round()
    while game.moves < moves and game.in_round:
        heuristic(game, game.rng)
    assert game.in_round
    return game, Turn(game.move, EngineTable(game, game.mover, [f"p{s}" for s in range(n)], PublicFeed()))


def test_the_two_seat_table_is_exact_where_it_can_be_done_by_hand() -> None:
    g = names(search_bot(1))
    shares = dict(g["ROUND_POINTS"])
    total = sum(shares.values())
    p10 = shares[10] / (total - shares[0])  # a lost round that changes anything takes 10
    win = g["win_table"](10, None)  # grid of 5: indices 0, 1, 2 are scores 0, 5, 10; any loss from 5 up busts
    assert abs(win[0][0] - 0.5) < 1e-9 and abs(win[2][2] - 0.5) < 1e-9
    # 10 against 0: a lost round busts; a won one gives the other 10 (then 10 against 10) or busts it
    assert abs(win[2][0] - 0.5 * (p10 * 0.5 + (1 - p10))) < 1e-9
    assert abs(win[1][0] - win[2][0]) < 1e-9  # 5 busts on every lost round too
    assert abs(win[0][2] - (1 - win[2][0])) < 1e-9


def test_the_two_seat_table_is_a_zero_sum_game_and_burns_count() -> None:
    g = names(search_bot(1))
    win = g["win_table"](125, 125)
    top = 125 // 5
    for a in range(top + 1):
        for b in range(top + 1):
            assert 0.0 <= win[a][b] <= 1.0
            assert abs(win[a][b] + win[b][a] - 1.0) < 1e-4, (a, b)
    assert win[0][24] > 0.8 and win[24][0] < 0.2  # 0 against 120
    flat = g["win_table"](125, None)
    # 95: a lost round of exactly 30 burns to 0 (R8.3); without burns it only busts or climbs
    assert win[19][10] > flat[19][10] + 0.01


def test_a_long_game_gets_a_quarter_of_the_budget_after_its_work_runs_out() -> None:
    spends = []
    for seed in range(40):
        game, turn = turn_at(2, seed, moves=2 + seed % 5)
        bot = search_bot(48)
        candidates = bot.candidates(turn, drawn=False)
        if not 2 <= len(candidates) <= 3:
            continue
        bot.stop = names(bot)["MOVE_WORK"]
        bot.choose(turn, random.Random(seed), candidates)
        capped = search_bot(48)
        start = capped.work = names(capped)["GAME_WORK"]
        capped.stop = start + names(capped)["MOVE_WORK"]
        capped.choose(turn, random.Random(seed), candidates)
        spends.append((bot.work, capped.work - start))
        if len(spends) == 3:
            break
    assert len(spends) == 3
    for full, quarter in spends:
        assert full > 3 * quarter > 0, spends


def test_a_moves_search_stops_at_its_work_bound_and_still_chooses() -> None:
    checked = 0
    for seed in range(60):
        game, turn = turn_at(4, seed, moves=3 + seed % 7)
        bot = search_bot(400)
        candidates = bot.candidates(turn, drawn=False)
        if len(candidates) < 3:
            continue
        free = search_bot(400)
        free.stop = 10**9
        free.choose(turn, random.Random(seed), candidates)
        bot.stop = 2_000  # well under what the full budget takes here
        plan = bot.choose(turn, random.Random(seed), candidates)
        assert plan in candidates
        # it stopped after the world that crossed the bound: one world's playouts at most past it
        assert free.work > 4 * 2_000 and bot.work < 2_000 + free.work // 4, (free.work, bot.work)
        checked += 1
        if checked == 4:
            break
    assert checked == 4
