"""docs/rules.md rule by rule, on scripted deals (see ``scripted_game`` in conftest.py).

Each test is named after the rule it checks. A scripted deal lists the hands
per seat, the stock top first and the opening card (the pile's top).
Refused actions are checked with ``refused(game, rule, action, ...)``: the
action must raise ``IllegalMove`` citing ``rule`` and change nothing.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.game.cards import DECK, Card, cards
from arena.game.engine import Game, place_seats
from arena.game.fallback import fallback_move
from arena.game.rules import CONTEST, Rules


def events(game: Game, since: int = 0, kind: str | None = None) -> list[dict]:
    out = game.log[since:]
    return [e for e in out if kind is None or e["event"] == kind]


def play_round(game: Game, rng: random.Random) -> None:
    """Finish the current round with legal moves (the referee's fallback policy)."""
    while game.in_round:
        fallback_move(game, rng)


def play_game(game: Game, seed: int = 0) -> None:
    rng = random.Random(seed)
    while not game.over:
        game.start_round()
        play_round(game, rng)


C = Card


# -- R2 table, game, round ------------------------------------------------------


def test_R2_1_play_passes_to_the_next_seat(scripted_game):
    game = scripted_game(["9s kd", "9c kc", "9d ks"], stock="qs qd", opening="9h", first=2)
    assert game.mover == 2
    game.finish()  # the opening 9h counts as seat 2's put (R3.3)
    assert game.mover == 0
    game.put("9s")
    game.finish()
    assert game.mover == 1
    game.put("9c")
    game.finish()
    assert game.mover == 2


@pytest.mark.parametrize("n", [0, 1, 7, 8])
def test_R2_1_two_to_six_players(n):
    with pytest.raises(ValueError, match="R2.1"):
        Game(n)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_R2_1_every_table_size_starts(n):
    game = Game(n, seed=1)
    game.start_round()
    assert game.n == n and len(game.hands) == n


def test_R2_2_scores_start_at_zero():
    game = Game(4, seed=3)
    assert game.scores == [0, 0, 0, 0]
    game.start_round()
    assert events(game, kind="deal")[0]["scores"] == [0, 0, 0, 0]


def test_R2_2_scores_run_over_rounds():
    game = Game(3, seed=5)
    rng = random.Random(1)
    total = [0, 0, 0]
    for _ in range(3):
        if game.over:
            break
        game.start_round()
        play_round(game, rng)
        result = game.round_results[-1]
        total = [t + p for t, p in zip(total, result.points, strict=True)]
        total = [0 if t == 125 else t for t in total]
        assert list(result.scores) == total == game.scores


def test_R2_3_game_ends_when_a_score_exceeds_the_limit(scripted_game):
    game = scripted_game(["9s", "kd"], opening="9h", scores=[0, 120])
    game.put("9s")
    game.finish()
    assert game.scores == [0, 130]
    assert game.over
    with pytest.raises(RuntimeError):
        game.start_round()


def test_R2_3_score_equal_to_limit_does_not_end_the_game(scripted_game):
    game = scripted_game(["9s", "kd"], opening="9h", scores=[0, 115], rules=Rules(burn=None))
    game.put("9s")
    game.finish()
    assert game.scores == [0, 125]
    assert not game.over
    game.start_round()
    assert game.round == 2


def test_R2_3_limit_knob(scripted_game):
    rules = Rules(limit=50)
    game = scripted_game(["9s", "kd"], opening="9h", scores=[0, 41], rules=rules)
    game.put("9s")
    game.finish()
    assert game.scores == [0, 51] and game.over
    game = scripted_game(["9s", "kd"], opening="9h", scores=[0, 40], rules=rules)
    game.put("9s")
    game.finish()
    assert game.scores == [0, 50] and not game.over


@pytest.mark.parametrize("max_rounds", [1, 3])
def test_R2_4_round_guard(max_rounds):
    rules = Rules(max_rounds=max_rounds, limit=10**6)
    game = Game(3, rules, seed=11)
    play_game(game)
    assert game.round == max_rounds
    assert all(s <= 10**6 for s in game.scores)
    result = game.end()
    assert result.rounds == max_rounds
    assert result.losers == ()


def test_R2_4_round_guard_default_is_200():
    assert CONTEST.max_rounds == 200


# -- R3 dealing -----------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_R3_1_deal(n):
    game = Game(n, seed=n)
    game.start_round()
    deal = events(game, kind="deal")[0]
    assert [len(h) for h in deal["hands"]] == [5] * n
    assert len(deal["stock"]) == 36 - 5 * n
    dealt = [c for h in deal["hands"] for c in h] + deal["stock"]
    assert sorted(dealt) == sorted(str(c) for c in DECK)
    assert [[str(c) for c in h] for h in game.hands] == deal["hands"]
    # the stock after the opening card is turned: top first = deal stock[1:]
    assert [str(c) for c in reversed(game.stock)] == deal["stock"][1:]
    assert Counter(game.all_cards()) == Counter(DECK)


def test_R3_1_hand_size_knob():
    game = Game(4, Rules(hand_size=7), seed=2)
    game.start_round()
    assert [len(h) for h in game.hands] == [7, 7, 7, 7]
    assert len(game.stock) == 36 - 28 - 1
    with pytest.raises(ValueError, match="R3.1"):
        Game(6, Rules(hand_size=6))


def test_R3_1_each_round_shuffles_afresh_from_the_game_seed():
    def deals(seed):
        game = Game(3, seed=seed)
        play_game(game, seed=0)
        return [(e["hands"], e["stock"]) for e in events(game, kind="deal")]

    a, b, c = deals(42), deals(42), deals(43)
    assert a == b
    assert a != c
    assert len(a) > 1
    assert len({str(d) for d in a}) == len(a)  # every round a new deal


def test_R3_2_first_player_rotates():
    game = Game(4, Rules(limit=400), seed=9)
    play_game(game)
    firsts = [e["first"] for e in events(game, kind="deal")]
    assert len(firsts) >= 5
    assert firsts == [(r - 1) % 4 for r in range(1, len(firsts) + 1)]
    puts = events(game, kind="put")
    openings = [e["seat"] for e in puts if e.get("opening")]
    assert openings == firsts


def _seat2_wins_round_one(scripted_game, rules):
    game = scripted_game(["kd", "9s kc", "9c"], stock="qs qd qh", opening="9h", rules=rules)
    game.finish()  # seat 0: the opening counts as its put
    game.put("9s")
    game.finish()
    game.put("9c")
    result = game.finish()
    assert result is not None and result.winner == 2
    game.start_round()
    return game


def test_R3_2_winner_knob(scripted_game):
    game = _seat2_wins_round_one(scripted_game, Rules(first_player="winner"))
    assert events(game, kind="deal")[-1]["first"] == 2
    assert game.mover == 2 and game.move.first
    rotate = _seat2_wins_round_one(scripted_game, CONTEST)
    assert events(rotate, kind="deal")[-1]["first"] == 1
    assert rotate.mover == 1


def test_R3_2_winner_knob_rotates_after_a_round_without_winner(scripted_game):
    game = scripted_game(
        ["kd", "kc", "ks"], stock="qs qd", opening="9h", rules=Rules(first_player="winner", max_moves=1)
    )
    result = game.finish()
    assert result is not None and result.winner is None
    game.start_round()
    assert game.mover == 1


def test_R3_3_opening_card_is_the_stock_top_put_by_the_first_player():
    for n in range(2, 7):
        game = Game(n, seed=100 + n)
        game.start_round()
        deal = events(game, kind="deal")[0]
        opening = events(game, kind="put")[0]
        assert opening["card"] == deal["stock"][0]
        assert opening["opening"] is True and opening["seat"] == deal["first"] == game.mover
        assert game.pile == [C(opening["card"])] == game.round_pile
        assert game.move.put == [C(opening["card"])] and game.move.first


def test_R3_3_first_player_may_finish_at_once_but_not_draw(scripted_game, refused):
    game = scripted_game(["kd", "kc"], stock="qs qd", opening="9h")
    assert game.move.can_finish()
    refused(game, "R4.4", game.draw)  # something (the opening) was put in this move
    game.finish()
    assert game.mover == 1


def test_R3_3_opening_continuation(scripted_game, refused):
    game = scripted_game(["9s 9c ks", "kd"], stock="qs qd", opening="9h")
    refused(game, "R4.3", game.put, "ks")  # suit s would match 9s later, not now
    game.put("9s")
    refused(game, "R4.3", game.put, "ks")
    game.put("9c")
    game.finish()
    assert game.hands[0] == [C("ks")]


def test_R3_3_opening_six_must_be_covered(scripted_game, refused):
    game = scripted_game(["9s 7h", "kd"], stock="qs qd", opening="6h")
    refused(game, "R5.1", game.finish)
    refused(game, "R5.3", game.draw)  # a cover (7h) is in hand
    refused(game, "R5.2", game.put, "9s")
    game.put("7h")
    game.finish()
    assert game.mover == 1


def test_R3_3_opening_six_draw_until_cover(scripted_game, refused):
    game = scripted_game(["9s", "kd"], stock="kc qd 10h 8s", opening="6h")
    assert game.draw() == C("kc")
    refused(game, "R5.1", game.finish)
    assert game.draw() == C("qd")
    assert game.draw() == C("10h")
    refused(game, "R5.3", game.draw)
    game.put("10h")
    game.finish()
    assert game.hands[0] == cards("9s kc qd")


def test_R3_3_opening_jack_orders_its_own_suit(scripted_game, refused):
    game = scripted_game(["kd", "7h 7c jd"], stock="qs qd", opening="jc")
    assert game.move.suit == "c"
    assert events(game, kind="put")[-1] == {"event": "put", "seat": 0, "card": "jc", "opening": True, "suit": "c"}
    game.finish()
    refused(game, "R4.2", game.put, "7h")
    game.put("7c")
    game.finish()


def test_R3_3_opening_jack_orders_own_suit_in_a_real_deal():
    for seed in range(400):
        game = Game(2, seed=seed)
        game.start_round()
        if game.pile[-1].rank == "j":
            opening = events(game, kind="put")[0]
            assert opening["suit"] == game.pile[-1].suit == game.move.suit
            return
    pytest.fail("no seed gave an opening jack")


def test_R3_3_opening_seven_hits_the_first_players_neighbour(scripted_game):
    game = scripted_game(["kd", "kc", "ks"], stock="qs qd qh", opening="7h", first=1)
    mark = len(game.log)
    game.finish()
    assert events(game, mark, "penalty") == [{"event": "penalty", "seat": 2, "card": "qs", "rank": "7"}]
    assert game.hands[2] == cards("ks qs") and game.hands[0] == cards("kd")
    assert game.mover == 2


def test_R3_3_opening_eight_hits_the_first_players_neighbour(scripted_game):
    game = scripted_game(["kd", "kc", "ks"], stock="qs qd qh", opening="8h")
    mark = len(game.log)
    game.finish()
    assert [(e["seat"], e["card"], e["rank"]) for e in events(game, mark, "penalty")] == [
        (1, "qs", "8"),
        (1, "qd", "8"),
    ]
    assert events(game, mark, "skip") == [{"event": "skip", "seat": 1}]
    assert game.mover == 2


def test_R3_3_opening_ace_hits_the_first_players_neighbour(scripted_game):
    game = scripted_game(["kd", "kc", "ks"], stock="qs qd qh", opening="ah", first=2)
    mark = len(game.log)
    game.finish()
    assert events(game, mark, "skip") == [{"event": "skip", "seat": 0}]
    assert game.mover == 1
    assert not events(game, mark, "penalty")


def test_R3_3_opening_eight_with_continuation_counts_both(scripted_game):
    game = scripted_game(["8s kd", "kc", "ks"], stock="qs qd qh qc 10s", opening="8h")
    mark = len(game.log)
    game.put("8s")
    game.finish()
    assert [e["seat"] for e in events(game, mark, "penalty")] == [1, 1, 2, 2]
    assert [e["seat"] for e in events(game, mark, "skip")] == [1, 2]
    assert game.mover == 0


# -- R4 a move ------------------------------------------------------------------


def mid_move(scripted_game, hand, top="9h", *, suit=None, stock="qs qd qc", n=2, pile_below=(), others=None):
    """Seat 0 to move on ``top`` (put by another player earlier)."""
    hands = [hand] + (others or ["qh", "kh", "6d", "8d", "9d"][: n - 1])
    return scripted_game(hands, stock=stock, opening=top, first_move=False, suit=suit, pile_below=pile_below)


@pytest.mark.parametrize(
    "card, ok", [("7h", True), ("9s", True), ("js", True), ("jh", True), ("7s", False), ("10c", False)]
)
def test_R4_1_matches_by_suit_rank_or_jack(scripted_game, refused, card, ok):
    game = mid_move(scripted_game, "7h 9s js jh 7s 10c", top="9h")
    assert game.move.matches(C(card)) is ok
    assert (C(card) in game.move.puttable()) is ok
    if ok:
        game.put(card)
        assert game.pile[-1] == C(card)
    else:
        refused(game, "R4.2", game.put, card)


def test_R4_1_ordered_suit_replaces_the_jacks_suit(scripted_game, refused):
    game = mid_move(scripted_game, "7h 7c 9h jd", top="jh", suit="c")
    assert game.move.suit == "c"
    refused(game, "R4.2", game.put, "7h")
    refused(game, "R4.2", game.put, "9h")
    assert sorted(game.move.puttable()) == sorted(cards("7c jd"))
    game.put("7c")


def test_R4_2_first_card_must_match(scripted_game, refused):
    game = mid_move(scripted_game, "7s kd 10c", top="9h")
    for card in ("7s", "kd", "10c"):
        err = refused(game, "R4.2", game.put, card)
        assert "9h" in str(err)
    assert game.move.puttable() == []


def test_R4_2_card_not_in_hand_is_refused(scripted_game, refused):
    game = mid_move(scripted_game, "7s", top="9h")
    refused(game, "R10", game.put, "7h")  # matches, but not held
    refused(game, "R1.2", game.put, "zz")  # not a card at all


def test_R4_3_only_same_rank_may_follow(scripted_game, refused):
    game = mid_move(scripted_game, "9s 9c 7s ks js", top="9h")
    game.put("9s")
    refused(game, "R4.3", game.put, "7s")  # matches the suit, but not the rank
    refused(game, "R4.3", game.put, "ks")
    refused(game, "R4.3", game.put, "js")  # not even a jack
    assert game.move.puttable() == [C("9c")]
    game.put("9c")
    assert game.move.puttable() == []
    game.finish()
    assert game.hands[0] == cards("7s ks js")


def test_R4_3_same_rank_any_suit(scripted_game):
    game = mid_move(scripted_game, "10h 10s 10c 10d", top="9h")
    for card in ("10h", "10s", "10c", "10d"):
        game.put(card)
    assert game.hands[0] == []
    assert game.move.suit == "d"


def test_R4_4_one_voluntary_draw_even_with_a_match(scripted_game, refused):
    game = mid_move(scripted_game, "9s", top="9h", stock="kc qd")
    assert game.move.can_draw()
    assert game.draw() == C("kc")
    refused(game, "R4.4", game.draw)
    game.finish()
    assert game.hands[0] == cards("9s kc")


def test_R4_4_after_the_draw_any_matching_card_may_be_put(scripted_game, refused):
    game = mid_move(scripted_game, "9s 7c", top="9h", stock="9d qd")
    game.draw()
    game.put("9s")  # an old card
    refused(game, "R4.4", game.draw)
    game.put("9d")  # the drawn one, by R4.3
    refused(game, "R4.3", game.put, "7c")
    game.finish()


def test_R4_4_no_draw_after_a_put(scripted_game, refused):
    game = mid_move(scripted_game, "9s 7c", top="9h")
    game.put("9s")
    refused(game, "R4.4", game.draw)


def test_R4_5_finish_needs_a_put_or_a_draw(scripted_game, refused):
    game = mid_move(scripted_game, "9s 7c", top="9h")
    refused(game, "R4.5", game.finish)
    game.draw()
    game.finish()


def test_R4_5_finish_without_action_when_nothing_can_be_drawn(scripted_game, refused):
    game = mid_move(scripted_game, "7c", top="9h", stock="")
    assert not game.move.can_draw()
    refused(game, "R7.2", game.draw)
    assert game.move.can_finish()
    game.finish()
    assert game.mover == 1
    assert game.hands[0] == [C("7c")]


def test_R4_6_actions_after_the_round_ended_are_refused(scripted_game, refused):
    game = mid_move(scripted_game, "9s", top="9h")
    game.put("9s")
    game.finish()
    refused(game, "R8.1", game.finish)
    refused(game, "R8.1", game.draw)
    refused(game, "R8.1", game.put, "kd")


# -- R5 sixes -------------------------------------------------------------------


def test_R5_1_no_finish_on_an_own_six(scripted_game, refused):
    game = mid_move(scripted_game, "6h 7h", top="9h")
    game.put("6h")
    refused(game, "R5.1", game.finish)
    game.put("7h")
    game.finish()


def test_R5_1_a_six_from_an_earlier_move_needs_no_cover(scripted_game):
    game = mid_move(scripted_game, "kd", top="6s", stock="qc")
    assert not game.move.needs_cover()
    game.draw()
    game.finish()


@pytest.mark.parametrize("cover", ["7h", "6s", "jc"])
def test_R5_2_cover_by_suit_six_or_jack(scripted_game, refused, cover):
    game = mid_move(scripted_game, f"6h 7s 9c {cover}", top="9h")
    game.put("6h")
    refused(game, "R5.2", game.put, "7s")
    refused(game, "R5.2", game.put, "9c")  # the 9h is not the top any more
    game.put(cover)
    assert game.pile[-1] == C(cover)


def test_R5_2_a_covering_six_must_be_covered(scripted_game, refused):
    game = mid_move(scripted_game, "6h 6s 9h 9s", top="10h")
    game.put("6h")
    game.put("6s")
    refused(game, "R5.1", game.finish)
    refused(game, "R5.2", game.put, "9h")  # the suit to follow is now s
    game.put("9s")
    game.finish()


def test_R5_2_after_a_non_six_cover_R4_3_applies(scripted_game, refused):
    game = mid_move(scripted_game, "6h 9h 9s 7h 6c", top="10h")
    game.put("6h")
    game.put("9h")
    refused(game, "R4.3", game.put, "7h")
    refused(game, "R4.3", game.put, "6c")
    game.put("9s")
    game.finish()


def test_R5_3_draw_until_cover(scripted_game, refused):
    game = mid_move(scripted_game, "6h ks", top="9h", stock="qs 10c kh 8h")
    game.put("6h")
    assert game.draw() == C("qs")
    refused(game, "R5.1", game.finish)
    assert game.draw() == C("10c")
    assert game.draw() == C("kh")
    refused(game, "R5.3", game.draw)
    refused(game, "R5.1", game.finish)
    refused(game, "R5.2", game.put, "ks")
    game.put("kh")
    game.finish()
    assert [e["event"] for e in events(game, kind=None)[-6:]] == ["put", "draw", "draw", "draw", "put", "finish"]
    assert game.stock == [C("8h")]


def test_R5_3_cover_draws_after_the_voluntary_draw(scripted_game):
    game = mid_move(scripted_game, "ks", top="9h", stock="6h qd 7h")
    game.draw()  # voluntary (R4.4)
    game.put("6h")
    assert game.move.can_draw()  # now a cover draw (R5.3)
    game.draw()
    game.draw()
    game.put("7h")
    game.finish()
    assert game.hands[0] == cards("ks qd")


def test_R5_3_any_cover_may_be_chosen(scripted_game):
    game = mid_move(scripted_game, "6h 7h jc 6d", top="9h")
    game.put("6h")
    assert sorted(game.move.puttable()) == sorted(cards("7h jc 6d"))


def test_R5_4_uncovered_six_when_nothing_can_be_drawn(scripted_game, refused):
    game = scripted_game(["ks", "kd"], stock="", opening="6h")
    refused(game, "R7.2", game.draw)
    assert game.move.can_finish()
    mark = len(game.log)
    game.finish()
    assert events(game, mark) == [{"event": "finish", "seat": 0}]
    assert game.mover == 1 and game.pile[-1] == C("6h")


def test_R5_4_a_held_cover_must_still_be_put(scripted_game, refused):
    game = scripted_game(["ks 7h", "kd"], stock="", opening="6h")
    refused(game, "R5.1", game.finish)
    refused(game, "R5.3", game.draw)
    game.put("7h")
    game.finish()


def test_R5_4_cover_draws_exhaust_the_stock(scripted_game, refused):
    game = scripted_game(["kc", "kd"], stock="ks qd", opening="6h")
    game.draw()
    game.draw()
    refused(game, "R7.2", game.draw)
    game.finish()
    assert game.hands[0] == cards("kc ks qd") and game.pile == [C("6h")]


# -- R6 effects -----------------------------------------------------------------


def test_R6_final_group_of_a_mixed_run(scripted_game):
    # docs/rules.md's example: for 6h 6c 7c 7d the final group is 7c 7d
    game = mid_move(scripted_game, "6h 6c 7c 7d kd", top="9h", n=3, stock="qs qd qc")
    for card in ("6h", "6c", "7c", "7d"):
        game.put(card)
    assert Game.final_group(game.move.put) == cards("7c 7d")
    mark = len(game.log)
    game.finish()
    assert [(e["seat"], e["rank"]) for e in events(game, mark, "penalty")] == [(1, "7"), (2, "7")]


def test_R6_a_six_never_has_an_effect(scripted_game):
    game = scripted_game(["ks", "kd", "kc"], stock="", opening="6h")
    mark = len(game.log)
    game.finish()  # R5.4: uncovered, nothing to draw
    assert not events(game, mark, "penalty") and not events(game, mark, "skip")
    assert game.mover == 1


def test_R6_a_draw_only_move_has_no_effect(scripted_game):
    game = mid_move(scripted_game, "kd", top="7h", stock="qs qd")
    mark = len(game.log)
    game.draw()
    game.finish()
    assert not events(game, mark, "penalty")


def test_R6_target_cycling_two_players(scripted_game):
    game = scripted_game(["7s 7c kd", "kc"], stock="qs qd qh 10s", opening="7h")
    game.put("7s")
    game.put("7c")
    mark = len(game.log)
    game.finish()
    assert [(e["seat"], e["card"]) for e in events(game, mark, "penalty")] == [(1, "qs"), (1, "qd"), (1, "qh")]
    assert game.mover == 1


def test_R6_target_cycling_three_players_aces(scripted_game):
    game = scripted_game(["as ac ad kd 9d", "kc", "ks"], stock="qs qd qh", opening="ah")
    for card in ("as", "ac", "ad"):
        game.put(card)
    mark = len(game.log)
    game.finish()  # 4 aces: targets 1, 2, 1, 2
    assert [e["seat"] for e in events(game, mark, "skip")] == [1, 2]
    assert game.mover == 0 and game.skips == [0, 1, 1]
    game.put("9d")
    mark = len(game.log)
    game.finish()
    assert [e["seat"] for e in events(game, mark, "skip")] == [1, 2]
    assert game.mover == 0 and game.skips == [0, 0, 0]


def test_R6_targets_helper_cycles_and_skips_the_mover():
    game = Game(4)
    assert game.targets(1, 1) == [2]
    assert game.targets(1, 3) == [2, 3, 0]
    assert game.targets(1, 4) == [2, 3, 0, 2]
    assert game.targets(3, 2) == [0, 1]
    assert Game(2).targets(0, 3) == [1, 1, 1]


def test_R6_1_seven_each_target_draws_one(scripted_game):
    game = mid_move(scripted_game, "7h 7s kd", top="9h", n=4, stock="qs qd qc")
    game.put("7h")
    game.put("7s")
    mark = len(game.log)
    game.finish()
    assert events(game, mark, "penalty") == [
        {"event": "penalty", "seat": 1, "card": "qs", "rank": "7"},
        {"event": "penalty", "seat": 2, "card": "qd", "rank": "7"},
    ]
    assert not events(game, mark, "skip")
    assert game.mover == 1 and game.drawn == [0, 1, 1, 0]


def test_R6_2_eights_skip_and_draw(scripted_game):
    game = scripted_game(["kd", "8h 8s kc", "ks"], stock="qs qd qh qc 10s 10d", opening="9h", first=1, first_move=False)
    game.put("8h")
    game.put("8s")
    mark = len(game.log)
    game.finish()
    got = events(game, mark)
    assert got == [
        {"event": "finish", "seat": 1},
        {"event": "penalty", "seat": 2, "card": "qs", "rank": "8"},
        {"event": "penalty", "seat": 2, "card": "qd", "rank": "8"},
        {"event": "penalty", "seat": 0, "card": "qh", "rank": "8"},
        {"event": "penalty", "seat": 0, "card": "qc", "rank": "8"},
        {"event": "skip", "seat": 2},
        {"event": "skip", "seat": 0},
    ]
    assert game.mover == 1
    assert game.hands[2] == cards("ks qs qd") and game.hands[0] == cards("kd qh qc")


def test_R6_2_two_eights_two_players(scripted_game):
    game = scripted_game(["8s kd 9s", "kc"], stock="qs qd qh qc 10s", opening="8h")
    game.put("8s")
    game.finish()
    assert len(game.hands[1]) == 5 and game.mover == 0 and game.skips == [0, 1]
    assert game.draw() == C("10s")
    game.finish()
    assert game.mover == 0 and game.skips == [0, 0]
    game.put("9s")
    game.finish()
    assert game.mover == 1


def test_R6_3_ace_loses_a_turn(scripted_game):
    game = mid_move(scripted_game, "ah kd", top="9h", n=3, stock="qs")
    game.put("ah")
    mark = len(game.log)
    game.finish()
    assert events(game, mark) == [{"event": "finish", "seat": 0}, {"event": "skip", "seat": 1}]
    assert game.mover == 2 and game.hands[1] == [C("qh")]


def test_R6_3_lost_turn_count_is_kept(scripted_game):
    game = scripted_game(["as kd", "kc"], stock="qs qd", opening="ah")
    game.put("as")
    game.finish()  # two aces at seat 1 in a 2-player game
    assert game.mover == 0 and game.skips == [0, 1]
    game.draw()
    mark = len(game.log)
    game.finish()
    assert events(game, mark) == [{"event": "finish", "seat": 0}, {"event": "skip", "seat": 1}]
    assert game.mover == 0 and game.skips == [0, 0]


def test_R6_4_jack_orders_a_suit(scripted_game, refused):
    game = mid_move(scripted_game, "jh kd", top="9h", others=["7h 7c kc"])
    game.put("jh", suit="c")
    assert events(game, kind="put")[-1] == {"event": "put", "seat": 0, "card": "jh", "suit": "c"}
    game.finish()
    assert game.move.suit == "c" and game.move.top == C("jh")
    refused(game, "R4.2", game.put, "7h")
    game.put("7c")


def test_R6_4_jack_default_suit_is_its_own(scripted_game):
    game = mid_move(scripted_game, "jh kd", top="9h")
    game.put("jh")
    assert game.move.suit == "h"
    assert events(game, kind="put")[-1]["suit"] == "h"


def test_R6_4_the_last_jacks_order_counts(scripted_game):
    game = mid_move(scripted_game, "jh js kd", top="9h")
    game.put("jh", suit="c")
    game.put("js", suit="D")
    assert game.move.suit == "d"
    assert [e.get("suit") for e in events(game, kind="put")[-2:]] == ["c", "d"]


@pytest.mark.parametrize("bad", ["x", "hearts", 3, ""])
def test_R6_4_bad_suit_is_refused(scripted_game, refused, bad):
    game = mid_move(scripted_game, "jh kd", top="9h")
    refused(game, "R6.4", game.put, "jh", suit=bad)


def test_R6_4_suit_with_a_non_jack_is_ignored(scripted_game):
    game = mid_move(scripted_game, "9s kd", top="9h")
    game.put("9s", suit="c")
    assert game.move.suit == "s"
    assert "suit" not in events(game, kind="put")[-1]


def test_R6_5_effect_draws_happen_before_the_round_ends(scripted_game):
    game = mid_move(scripted_game, "7h", top="9h", others=["9s"], stock="qs")
    game.put("7h")
    result = game.finish()
    assert result is not None and result.winner == 0
    assert game.hands[1] == cards("9s qs")
    assert result.points == (0, 10)
    assert [e["event"] for e in game.log[-3:]] == ["finish", "penalty", "round"]


def test_R6_5_eight_on_going_out(scripted_game):
    game = mid_move(scripted_game, "8h", top="9h", others=["9s"], stock="qs as")
    game.put("8h")
    result = game.finish()
    assert result.points == (0, 25)
    assert not events(game, kind="skip")  # the round is over; no turn passes


# -- R7 the stock runs out ----------------------------------------------------


def test_R7_1_reshuffle(scripted_game):
    game = mid_move(scripted_game, "7c", top="kh", stock="", pile_below="9s 10s kd")
    assert game.move.can_draw()
    mark = len(game.log)
    card = game.draw()
    got = events(game, mark)
    assert [e["event"] for e in got] == ["reshuffle", "draw"]
    new = got[0]["stock"]
    assert sorted(new) == sorted(["9s", "10s", "kd"])
    assert got[1]["card"] == new[0] == str(card)
    assert game.pile == [C("kh")]
    assert [str(c) for c in reversed(game.stock)] == new[1:]
    assert game.round_pile == cards("9s 10s kd kh")  # turn.pile: every card put this round
    assert game.move.stock == 2 and game.move.pile_size == 1
    game.finish()


def test_R7_1_reshuffle_during_effect_draws(scripted_game):
    game = mid_move(scripted_game, "8h kd", top="9h", stock="qs", pile_below="9s 10s")
    game.put("8h")
    mark = len(game.log)
    game.finish()
    got = events(game, mark)
    assert [e["event"] for e in got] == ["finish", "penalty", "reshuffle", "penalty", "skip"]
    assert got[1]["card"] == "qs"
    assert sorted(got[2]["stock"]) == ["10s", "9h", "9s"]
    assert got[3]["card"] == got[2]["stock"][0]
    assert game.pile == [C("8h")] and len(game.stock) == 2


def test_R7_1_reshuffle_is_determined_by_the_seed(scripted_game):
    def run(seed):
        game = scripted_game(
            ["7c", "ks"], stock="", opening="kh", first_move=False, pile_below="9s 10s kd 6c 6d 8c 8d qs qd", seed=seed
        )
        game.draw()
        return events(game, kind="reshuffle")[0]["stock"]

    assert run(1) == run(1)
    assert len({tuple(run(s)) for s in range(6)}) > 1


def test_R7_2_draw_lapses(scripted_game):
    # empty stock, only one card under the top: the eight's second draw lapses
    game = mid_move(scripted_game, "8h kd", top="9h", stock="")
    game.put("8h")
    mark = len(game.log)
    game.finish()
    got = events(game, mark)
    assert [e["event"] for e in got] == ["finish", "reshuffle", "penalty", "skip"]
    assert got[2] == {"event": "penalty", "seat": 1, "card": "9h", "rank": "8"}
    assert game.stock == [] and game.pile == [C("8h")]
    assert game.mover == 0  # the lost turn still counts


def test_R7_2_voluntary_draw_not_available(scripted_game, refused):
    game = mid_move(scripted_game, "7c", top="9h", stock="")
    assert not game.move.can_draw()
    refused(game, "R7.2", game.draw)
    game.finish()


def test_R7_2_seven_lapses_entirely(scripted_game):
    game = scripted_game(["kd", "kc"], stock="", opening="7h")
    mark = len(game.log)
    game.finish()
    assert events(game, mark) == [{"event": "finish", "seat": 0}]
    assert game.hands[1] == [C("kc")]


# -- R8 end of a round, scoring -------------------------------------------------


def test_R8_1_round_ends_when_the_mover_goes_out(scripted_game):
    game = mid_move(scripted_game, "9s", top="9h", n=3, others=["kd", "as jd"])
    game.put("9s")
    assert game.in_round and game.hands[0] == []  # not before the finish
    result = game.finish()
    assert not game.in_round
    assert result.winner == 0
    assert game.log[-1] == {
        "event": "round",
        "round": 1,
        "winner": 0,
        "points": [0, 10, 35],
        "scores": [0, 10, 35],
        "burned": [],
    }


def test_R8_1_going_out_on_a_six_needs_a_cover(scripted_game, refused):
    game = mid_move(scripted_game, "6h", top="9h", stock="kc 7h qd")
    game.put("6h")
    assert game.hands[0] == []
    refused(game, "R5.1", game.finish)
    game.draw()
    game.draw()
    game.put("7h")
    result = game.finish()
    assert result is None and game.hands[0] == [C("kc")]


def test_R8_1_going_out_after_covering(scripted_game):
    game = mid_move(scripted_game, "6h 7h", top="9h")
    game.put("6h")
    game.put("7h")
    result = game.finish()
    assert result is not None and result.winner == 0


def test_R8_2_every_player_adds_hand_points(scripted_game):
    game = mid_move(scripted_game, "9s", top="9h", n=3, others=["as jd", "6s 10d 7c 8c 9c"])
    game.scores = [10, 20, 30]
    game.put("9s")
    result = game.finish()
    assert result.points == (0, 35, 10)
    assert result.scores == (10, 55, 40) and game.scores == [10, 55, 40]


def test_R8_3_exact_125_burns(scripted_game):
    game = scripted_game(["kd", "9s", "as"], opening="9h", scores=[115, 30, 110], first=1, first_move=False)
    game.put("9s")
    result = game.finish()
    assert result.points == (10, 0, 15)
    assert result.scores == (0, 30, 0) and result.burned == (0, 2)
    assert game.log[-1]["burned"] == [0, 2]
    assert not game.over


def test_R8_3_only_exactly_125_burns(scripted_game):
    game = scripted_game(["kd", "9s"], opening="9h", scores=[116, 0], first=1, first_move=False)
    game.put("9s")
    result = game.finish()
    assert result.scores == (126, 0) and result.burned == ()
    assert game.over


def test_R8_3_burn_knob(scripted_game):
    game = scripted_game(["kd", "9s"], opening="9h", scores=[115, 0], first=1, first_move=False, rules=Rules(burn=None))
    game.put("9s")
    assert game.finish().scores == (125, 0)
    game = scripted_game(["kd", "9s"], opening="9h", scores=[90, 0], first=1, first_move=False, rules=Rules(burn=100))
    game.put("9s")
    assert game.finish().scores == (0, 0)


def test_R8_4_move_guard(scripted_game):
    game = scripted_game(["kd 10c", "kc", "ks"], stock="qs qd qh qc", opening="9h", rules=Rules(max_moves=3))
    game.finish()
    game.draw()
    game.finish()
    game.draw()
    result = game.finish()
    assert result is not None and result.winner is None
    assert result.points == (20, 20, 20)
    assert game.log[-1]["winner"] is None
    assert game.last_winner is None


def test_R8_4_going_out_on_the_last_allowed_move_wins(scripted_game):
    game = scripted_game(["9s", "kc"], stock="qs", opening="9h", rules=Rules(max_moves=1), first_move=False)
    game.put("9s")
    assert game.finish().winner == 0


def test_R8_4_default_guard():
    assert CONTEST.max_moves == 1000


def test_R8_4_guard_ends_a_game_that_cannot_end():
    rules = Rules(max_moves=5, max_rounds=4, limit=10**6)
    game = Game(3, rules, seed=3)
    play_game(game)
    assert game.round == 4
    assert all(r.winner is None or 0 <= r.winner < 3 for r in game.round_results)


# -- R9 end of the game -------------------------------------------------------


@pytest.mark.parametrize(
    "scores, places",
    [
        ([10, 20, 20, 30], (1, 2, 2, 4)),
        ([5, 5, 5], (1, 1, 1)),
        ([130, 0], (2, 1)),
        ([0, 40, 40, 40, 126, 0], (1, 3, 3, 3, 6, 1)),
    ],
)
def test_R9_1_places_ties(scores, places):
    assert place_seats(scores) == places


def test_R9_1_losers_and_places_at_the_end(scripted_game):
    game = scripted_game(
        ["kd", "9s", "kc", "ks 10c"], opening="9h", scores=[120, 50, 40, 100], first=1, first_move=False
    )
    game.put("9s")
    game.finish()
    assert game.over and game.scores == [130, 50, 50, 120]
    result = game.end()
    assert result.losers == (0,)
    assert result.places == (4, 1, 1, 3)
    assert game.log[-1] == {
        "event": "end",
        "scores": [130, 50, 50, 120],
        "losers": [0],
        "places": [4, 1, 1, 3],
        "rounds": 1,
    }


def test_R9_1_several_losers(scripted_game):
    game = scripted_game(["kd", "9s", "as"], opening="9h", scores=[120, 50, 120], first=1, first_move=False)
    game.put("9s")
    game.finish()
    result = game.end()
    assert result.losers == (0, 2) and result.places == (2, 1, 3)


def test_R9_1_retired_seats_place_last():
    assert place_seats([0, 50, 100], {0}) == (3, 1, 2)
    assert place_seats([0, 50, 100, 0], {0, 3}) == (3, 1, 2, 3)


def test_R9_1_end_before_game_over_is_an_error():
    game = Game(2)
    with pytest.raises(RuntimeError):
        game.end()


# -- variants -----------------------------------------------------------------


def test_variant_jack_finish(scripted_game):
    rules = Rules(jack_finish=20)
    game = scripted_game(["jh js", "kd"], opening="9h", first_move=False, rules=rules, scores=[50, 0])
    game.put("jh")
    game.put("js", suit="d")
    result = game.finish()
    assert result.winner == 0 and result.scores == (10, 10)


def test_variant_jack_finish_only_counts_jacks_in_the_final_group(scripted_game):
    rules = Rules(jack_finish=20)
    game = scripted_game(["6h jc", "kd"], opening="9h", first_move=False, rules=rules, scores=[30, 0])
    game.put("6h")
    game.put("jc")  # the cover is the final group
    assert game.finish().scores == (10, 10)
    game = scripted_game(["9s", "jd"], opening="9h", first_move=False, rules=rules, scores=[30, 0])
    game.put("9s")
    assert game.finish().scores == (30, 20)


def test_variant_jack_finish_off_in_contest(scripted_game):
    game = mid_move(scripted_game, "jh", top="9h", others=["kd"])
    game.scores = [50, 0]
    game.put("jh")
    assert game.finish().scores == (50, 10)


def test_variant_stacked_effects_sevens_and_eights(scripted_game):
    rules = Rules(stacked_effects=True)
    game = scripted_game(["7s 7c kd", "kc", "ks"], stock="qs qd qh 10s 10d 10h", opening="7h", rules=rules)
    game.put("7s")
    game.put("7c")
    mark = len(game.log)
    game.finish()
    assert [e["seat"] for e in events(game, mark, "penalty")] == [1, 1, 1]
    assert game.mover == 1 and not events(game, mark, "skip")

    game = scripted_game(["8s kd", "kc", "ks"], stock="qs qd qh 10s 10d 10h", opening="8h", rules=rules)
    game.put("8s")
    mark = len(game.log)
    game.finish()
    assert [e["seat"] for e in events(game, mark, "penalty")] == [1, 1, 1, 1]
    assert [e["seat"] for e in events(game, mark, "skip")] == [1]
    assert game.mover == 2


def test_variant_stacked_effects_aces(scripted_game):
    rules = Rules(stacked_effects=True)
    game = scripted_game(["as ac kd 9d", "kc", "ks"], stock="qs qd", opening="ah", rules=rules)
    game.put("as")
    game.put("ac")
    game.finish()
    assert game.mover == 2 and game.skips == [0, 2, 0]


def test_variant_teams_needs_four_or_six():
    rules = Rules(teams=True)
    for n in (2, 3, 5):
        with pytest.raises(ValueError):
            Game(n, rules)
    Game(4, rules)
    Game(6, rules)


def test_variant_teams_losers_and_places(scripted_game):
    rules = Rules(teams=True)
    game = scripted_game(["9s", "kd", "6c", "6d"], opening="9h", rules=rules, scores=[10, 120, 40, 0], first_move=False)
    game.put("9s")
    game.finish()
    assert game.over
    result = game.end()
    assert result.losers == (1, 3)  # seat 1 is over; its partner is seat 3
    assert result.places == (1, 3, 1, 3)  # teams (0, 2): 50, (1, 3): 130
    assert place_seats([1, 2, 3, 4, 5, 6], teams=True) == (1, 3, 5, 1, 3, 5)


def test_R6_4_order_persists_across_draw_only_moves(scripted_game, refused):
    game = scripted_game(["jh kd", "qs", "7h 7c"], stock="10s 10d", opening="9h", first_move=False)
    game.put("jh", suit="c")
    game.finish()
    game.draw()  # seat 1 cannot follow clubs: draws, finishes
    game.finish()
    assert game.mover == 2 and game.move.suit == "c"
    refused(game, "R4.2", game.put, "7h")
    game.put("7c")


# -- the rules value: every [knob] is a field, defaults are the contest variant ----


def test_knobs_default_to_the_contest_variant():
    rules = Rules()
    assert (rules.limit, rules.max_rounds, rules.hand_size, rules.first_player, rules.burn, rules.max_moves) == (
        125,
        200,
        5,
        "rotate",
        125,
        1000,
    )
    assert (rules.jack_finish, rules.stacked_effects, rules.teams) == (0, False, False)
    assert rules == CONTEST and rules.changed() == {}


def test_knobs_are_frozen_and_round_trip():
    rules = Rules(limit=101, burn=None, points={"a": 11})
    with pytest.raises(AttributeError):
        rules.limit = 5  # type: ignore[misc]
    assert Rules.from_dict(rules.to_dict()) == rules
    assert rules.replace(limit=125, burn=125, points={}) == Rules()
    assert rules.changed() == {"limit": 101, "burn": None, "points": {**dict(Rules().points), "a": 11}}
    assert hash(Rules(limit=7)) == hash(Rules(limit=7))
    with pytest.raises(ValueError):
        Rules.from_dict({"limit": 3, "colour": "red"})


@pytest.mark.parametrize(
    "bad",
    [{"first_player": "loser"}, {"hand_size": 0}, {"hand_size": 8}, {"limit": 0}, {"max_rounds": 0}, {"max_moves": 0}],
)
def test_bad_knobs_are_refused(bad):
    with pytest.raises(ValueError):
        Rules(**bad)
