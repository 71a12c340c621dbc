"""R1: the deck, card text (R1.2) and penalty points (R1.3)."""

from __future__ import annotations

import copy
import pickle

import pytest

from arena.game.cards import DECK, RANKS, SUITS, Card, cards
from arena.game.rules import Rules


def test_R1_1_deck_has_36_distinct_cards():
    assert len(DECK) == 36
    assert len(set(DECK)) == 36
    assert {c.suit for c in DECK} == {"s", "c", "h", "d"}
    assert {c.rank for c in DECK} == {"6", "7", "8", "9", "10", "j", "q", "k", "a"}
    assert {(c.rank, c.suit) for c in DECK} == {(r, s) for r in RANKS for s in SUITS}


@pytest.mark.parametrize(
    "text, printed",
    [
        ("6s", "6s"),
        ("10h", "10h"),
        ("jd", "jd"),
        ("qc", "qc"),
        ("kh", "kh"),
        ("as", "as"),
        ("10H", "10h"),
        ("JS", "js"),
        ("Qc", "qc"),
        ("aS", "as"),
        (" 7d ", "7d"),
    ],
)
def test_R1_2_parse_case_insensitive_print_lower(text, printed):
    card = Card.parse(text)
    assert str(card) == printed
    assert Card(text) is card  # interned: one object per card
    assert Card(str(card)) is card  # round trip
    assert repr(card) == f"Card('{printed}')"


@pytest.mark.parametrize("bad", ["", "1h", "11h", "5s", "6x", "10", "h", "j", "jj", "6s6s", "10 h", "t h"])
def test_R1_2_bad_text_is_refused(bad):
    with pytest.raises(ValueError, match="R1.2"):
        Card.parse(bad)


@pytest.mark.parametrize("bad", [None, 6, 10.0, b"6s", ["6s"]])
def test_R1_2_non_text_is_refused(bad):
    with pytest.raises(ValueError, match="R1.2"):
        Card(bad)


def test_R1_2_every_card_round_trips_in_any_case():
    for card in DECK:
        text = str(card)
        assert text == card.rank + card.suit
        assert Card(text.upper()) is card
        assert Card(text.capitalize()) is card


def test_R1_2_cards_helper_parses_lists():
    assert [str(c) for c in cards("6h, 10S jd")] == ["6h", "10s", "jd"]


def test_R1_2_card_is_immutable_and_copies_are_itself():
    card = Card("qh")
    with pytest.raises(AttributeError):
        card.rank = "k"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        card.points = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del card.suit
    assert str(card) == "qh" and card.rank == "q" and card.points == 10
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card


def test_R1_2_cards_compare_and_hash_as_values():
    assert Card("10h") == Card("10H")
    assert Card("10h") != Card("10s")
    assert len({Card("6s"), Card("6S"), Card.parse(" 6s")}) == 1
    assert sorted([Card("as"), Card("6d"), Card("6s")]) == [Card("6s"), Card("6d"), Card("as")]


def test_R1_2_a_card_equals_itself_only():
    for a in DECK:
        for b in DECK:
            assert (a == b) is (a is b) and (a != b) is (a is not b)
            assert (a < b) is (a.index < b.index)
        assert a != a._text and not a == a._text  # a card is not its text
        assert a != a.index and a not in [a.index, a._text, None]

    class Liar:
        def __eq__(self, other: object) -> bool:
            return True

    hand = list(DECK[:5])
    assert Liar() not in hand  # an object claiming to equal every card is no card of a hand
    hand.remove(DECK[3])
    assert hand == [DECK[0], DECK[1], DECK[2], DECK[4]]


def test_R1_3_contest_points():
    expected = {"6": 0, "7": 0, "8": 0, "9": 0, "10": 10, "j": 20, "q": 10, "k": 10, "a": 15}
    for card in DECK:
        assert card.points == expected[card.rank], card
    assert dict(Rules().points) == expected
    assert sum(c.points for c in DECK) == 4 * (10 + 20 + 10 + 10 + 15)


def test_R1_3_point_table_knob():
    rules = Rules(points={"a": 11, "6": 1})
    assert rules.card_points("a") == 11
    assert rules.card_points("6") == 1
    assert rules.card_points("j") == 20  # unchanged ranks keep the contest value
    with pytest.raises(TypeError):
        rules.points["a"] = 3  # type: ignore[index]  # read-only
    with pytest.raises(ValueError, match="R1.3"):
        Rules(points={"5": 3})


def test_R1_3_point_table_knob_scores_hands(scripted_game):
    rules = Rules(points={"a": 11, "9": 2})
    game = scripted_game(["9c", "as 9s kd"], stock="", opening="9h", rules=rules)
    game.put("9c")
    result = game.finish()
    assert result is not None and result.winner == 0
    assert result.points == (0, 11 + 2 + 10)
