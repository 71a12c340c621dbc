"""The human seat (``arena play human BOT``): scripted sessions, bad input, leaving."""

from __future__ import annotations

import dataclasses
import io
import itertools
import re
from types import MappingProxyType

import pytest
from support.cli import run

from arena.botapi.turn import Turn
from arena.cli import main
from arena.game.cards import Card
from arena.game.engine import GameResult, RoundResult
from arena.game.referee import EngineTable, GameInfo
from arena.game.rules import CONTEST
from arena.playing.human import HumanLeft, HumanPlayer
from arena.plugins import variants


class Script:
    """Answers from a list; records prompts. Running out is the end of input."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


def seat_human(game, answers, names=("human", "greedy", "random")):
    """A HumanPlayer at the mover's seat of ``game``, with its output collected."""
    out: list[str] = []
    names = tuple(names[: game.n])
    player = HumanPlayer(game.mover, ask=Script(answers), show=out.append, symbols=False)
    player.start_game(GameInfo(game.mover, names, CONTEST, "1"))
    turn = Turn(game.move, EngineTable(game, game.mover, names))
    return player, turn, out


def said(out: list[str], text: str) -> list[str]:
    return [line for line in out if text in line]


def test_bad_input_is_reasked_with_a_reason_citing_the_rule(scripted_game):
    # seat 0 to move on 9h; sorted hand: 1) 9s 2) kc 3) 6h 4) 7d 5) jd
    game = scripted_game(["9s 7d jd 6h kc", "kd qd"], stock="qs qc 10s", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["xyz", "9", "2", "f", "1"])
    player.move(turn)
    assert said(out, "'xyz' is not a choice: type a card number (1-5)")
    assert said(out, "there is no card 9: your cards are numbered 1-5")
    refused = said(out, "not allowed: R4.2: the first card must match 9h")
    assert refused and "kc does not" in refused[0]
    assert said(out, "not allowed: R4.5")
    assert said(out, "you put 9s")
    assert said(out, "nothing more to put: your move ends")
    assert turn.finished and game.mover == 1
    assert [e["card"] for e in game.log if e["event"] == "put"][-1] == "9s"


def test_the_menu_offers_only_legal_puts(scripted_game):
    game = scripted_game(["9s 7d jd 6h kc", "kd qd"], stock="qs qc 10s", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["1"])
    player.move(turn)
    hand = said(out, "Your hand:")[0]
    assert "1) 9s  2) kc  3) 6h  4) 7d  5) jd" in hand
    menu = said(out, "You can:")[0]
    assert "put 1) 9s 3) 6h 5) jd" in menu and "2) kc" not in menu and "4) 7d" not in menu
    assert "d) draw" in menu and "f) finish" not in menu  # R4.5: nothing put or drawn yet


def test_a_jack_asks_for_the_suit_and_reasks_on_nonsense(scripted_game):
    game = scripted_game(["jd 7c", "kd qd"], stock="qs", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["2", "purple", "9", "s"])
    player.move(turn)
    assert said(out, "orders a suit (R6.4)")
    assert len(said(out, "R6.4: a jack orders one of the four suits")) == 2
    put = [e for e in game.log if e["event"] == "put"][-1]
    assert put == {"event": "put", "seat": 0, "card": "jd", "suit": "s"}


def test_enter_keeps_the_jacks_own_suit(scripted_game):
    game = scripted_game(["jd 7c", "kd qd"], stock="qs", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["jd", ""])
    player.move(turn)
    assert [e for e in game.log if e["event"] == "put"][-1]["suit"] == "d"


def test_six_cover_draws_are_done_for_you_and_a_draw_with_a_cover_is_refused(scripted_game):
    # put 6h; kc does not cover, so qs then 10h are drawn; with 10h in hand a draw is refused (R5.3)
    game = scripted_game(["6h kc", "kd qd"], stock="qs 10h 7s", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["6h", "d", "10H"])
    player.move(turn)
    draws = said(out, "no card covers the six 6h, so you draw (R5.3):")
    assert [line.split()[-1] for line in draws] == ["qs", "10h"]
    assert said(out, "Cover the six 6h (R5)")
    assert said(out, "not allowed: R5.3: you hold a card that covers")
    assert [e["card"] for e in game.log if e["event"] == "put"][-2:] == ["6h", "10h"]
    assert turn.finished


def test_nothing_matches_draws_for_you_then_you_choose(scripted_game):
    game = scripted_game(["kc", "kd qd"], stock="9h 7s", opening="10h", first_move=False)
    player, turn, out = seat_human(game, ["f"])
    player.move(turn)
    assert said(out, "nothing matches 10h, so you draw (R4.4): 9h")
    assert said(out, "You can: put 2) 9h | f) finish")
    assert turn.finished and game.hands[0] == [Card("kc"), Card("9h")]


def test_a_draw_that_does_not_match_ends_the_move_by_itself(scripted_game):
    game = scripted_game(["kc", "kd qd"], stock="qs 7s", opening="10h", first_move=False)
    player, turn, out = seat_human(game, [])
    player.move(turn)  # no question asked: nothing to choose
    assert said(out, "nothing matches 10h, so you draw (R4.4): qs")
    assert said(out, "(the card drawn does not match: your move ends)")
    assert turn.finished


def test_first_move_explains_the_opening_card(scripted_game):
    game = scripted_game(["7s 9c", "kd qd"], stock="qs", opening="7h")
    player, turn, out = seat_human(game, ["1", "f"])
    player.move(turn)
    assert said(out, "the opening card 7h counts as your put (R3.3)")
    assert said(out, "You may add cards of rank 7 (R4.3) or finish.")
    assert said(out, "you put 7s")


def test_state_shows_players_top_suit_and_stock(scripted_game):
    game = scripted_game(["9s 7d", "kd qd", "as"], stock="qs qc", opening="jh", suit="c", first_move=False)
    game.scores = [30, 12, 0]
    game.skips[2] = 1
    player, turn, out = seat_human(game, ["f", "1"])
    player.move(turn)
    text = "\n".join(out)
    assert "Top card jh, suit to follow c (clubs) (ordered by the jack). Stock: 2 cards; pile: 1 card" in text
    assert "0  you      2 cards  score 30" in text
    assert "1  greedy   2 cards  score 12" in text
    assert "2  random   1 card   score 0, loses 1 turn" in text


def test_news_since_the_last_move_lists_puts_draws_effects_and_skips():
    player = HumanPlayer(0, show=lambda line: None, symbols=False)
    player.start_game(GameInfo(0, ("human", "greedy", "random"), CONTEST, "1"))
    events = [
        {"event": "finish", "seat": 0},
        {"event": "penalty", "seat": 1, "rank": "8"},
        {"event": "penalty", "seat": 1, "rank": "8"},
        {"event": "skip", "seat": 1},
        {"event": "draw", "seat": 2},
        {"event": "put", "seat": 2, "card": "8h"},
        {"event": "finish", "seat": 2},
        {"event": "penalty", "seat": 0, "rank": "8"},
        {"event": "penalty", "seat": 0, "rank": "8"},
        {"event": "skip", "seat": 0},
        {"event": "put", "seat": 1, "card": "7h"},
        {"event": "put", "seat": 1, "card": "7s"},
        {"event": "finish", "seat": 1},
        {"event": "penalty", "seat": 2, "rank": "7"},
        {"event": "penalty", "seat": 0, "rank": "7"},
        {"event": "put", "seat": 2, "card": "js", "suit": "d"},
        {"event": "finish", "seat": 2},
        {"event": "reshuffle", "stock": 12},
        {"event": "say", "seat": 1, "text": "hi"},
    ]
    lines = player.news([MappingProxyType(e) for e in events])
    assert lines == [
        "-> greedy draws 2 cards (effect of 8, R6.2)",
        "-> greedy loses a turn",
        "random: drew a card, put 8h",
        "  -> you draw 2 cards (effect of 8, R6.2)",
        "-> you lose a turn",
        "greedy: put 7h 7s",
        "  -> random draws 1 card (effect of 7, R6.1)",
        "-> you draw 1 card (effect of 7, R6.1)",
        "random: put js ordering d (diamonds)",
        "(the pile was reshuffled into a stock of 12)",
        "greedy says: hi",
    ]


def test_round_and_game_results_are_shown():
    out: list[str] = []
    player = HumanPlayer(1, show=out.append, symbols=False)
    player.start_game(GameInfo(1, ("greedy", "human", "greedy"), CONTEST, "1"))
    player.end_round(RoundResult(4, 0, (0, 25, 40), (60, 0, 130), (1,)))
    player.end_game(GameResult((60, 0, 130), (2,), (2, 1, 3), 4))
    text = "\n".join(out)
    assert "== Round 4 over: greedy#0 went out" in text
    assert "you        +25  score 0  hit exactly 125: burned to 0 (R8.3)" in text
    assert "== Game over after 4 rounds." in text
    assert "1. you       0" in text and "3. greedy#2  130  over 125: loses" in text
    assert "You placed 1 of 3." in text


def test_suit_symbols_when_the_terminal_can_print_them(scripted_game):
    game = scripted_game(["9s 7d", "kd qd"], stock="qs", opening="9h", first_move=False)
    out: list[str] = []
    player = HumanPlayer(0, ask=Script(["1"]), show=out.append, symbols=True)
    player.start_game(GameInfo(0, ("human", "greedy"), CONTEST, "1"))
    player.move(Turn(game.move, EngineTable(game, 0, ("human", "greedy"))))
    assert "Your hand: 1) 9\u2660  2) 7\u2666" in "\n".join(out)


def test_end_of_input_and_quit_leave_the_game(scripted_game):
    game = scripted_game(["9s 7d", "kd qd"], stock="qs", opening="9h", first_move=False)
    player, turn, out = seat_human(game, [])
    with pytest.raises(HumanLeft, match="end of input"):
        player.move(turn)
    player, turn, out = seat_human(game, ["q"])
    with pytest.raises(HumanLeft, match="quit"):
        player.move(turn)
    assert isinstance(HumanLeft(), KeyboardInterrupt)  # so the match stops like on Ctrl-C


# -- through the command line -------------------------------------------------------


def answers(lines: int = 8000) -> str:
    """Answers that always make progress: a wrong one, every card number a hand can have, then
    draw, then finish. (Numbers up to 8 only left a human holding 10 or more cards, the covering
    one numbered above 9, refused for ever: 6 games in 300 ran out of answers.) Over 300 seeds of
    2-game matches of greedy and this human (limit 20), a match used at most 2,360 answers."""
    cycle = ["x", "99", *map(str, range(1, 37)), "d", "f"]
    return "\n".join(itertools.islice(itertools.cycle(cycle), lines)) + "\n"


def run_cli(monkeypatch, capsys, stdin: str, *argv: str) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return run(capsys, *argv)


def test_a_whole_game_at_the_terminal(monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, answers(), "play", "human", "greedy", "random", "--rule", "limit=20", "--seed", "3"
    )
    assert code == 0, err
    assert err == ""  # no progress bar, no warnings
    assert "Game 1: you sit at seat 0" in out
    assert "Since your last move:" in out and "your choice>" in out
    assert "not a choice" in out and "not allowed: R" in out
    assert "== Round 1 over" in out and "== Game over after" in out and "You placed" in out
    assert "Game 2:" not in out  # one game by default with a human
    table = out.splitlines()[-3:]
    assert table[0].split()[:3] == ["human", "human", "1"]  # bot, kind, games


def test_games_given_explicitly_with_a_human(monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, answers(), "play", "greedy", "human", "--rule", "limit=20", "--games", "2", "--seed", "12"
    )
    assert code == 0, err
    assert "Game 1: you sit at seat 1" in out and "Game 2: you sit at seat 0" in out


def test_end_of_input_leaves_with_one_line(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "x\n", "play", "human", "greedy")
    assert code == 130
    assert err == "arena: left the game (end of input) after 0 of 1 games\n"
    assert "Traceback" not in out


def test_quit_leaves(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "q\n", "play", "human", "greedy")
    assert code == 130 and err == "arena: left the game (quit) after 0 of 1 games\n"


def test_ctrl_c_leaves_cleanly(monkeypatch, capsys):
    def interrupt(prompt=""):
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupt)
    code = main(["play", "human", "greedy"])
    captured = capsys.readouterr()
    assert code == 130
    assert captured.err == "arena: interrupted after 0 of 1 games\n"


def test_card_numbers_stay_put_within_a_move(scripted_game):
    # seat 0 on 9h; sorted hand: 1) 9s 2) 9c 3) kc 4) 9d.  Put 1), then 4) and 2)
    # must still name 9d and 9c (a put leaves a gap, it does not renumber).
    game = scripted_game(["9s 9c 9d kc", "kd qd"], stock="qs qc 10s", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["1", "4", "2", "f"])
    player.move(turn)
    puts = [line.strip() for line in out if line.strip().startswith("you put")]
    assert puts == ["you put 9s", "you put 9d", "you put 9c"]
    assert said(out, "Your hand: 2) 9c  3) kc  4) 9d")  # after the first put: the gap at 1
    assert turn.finished


def test_help_leaves_no_stray_prompt(scripted_game):
    game = scripted_game(["9s 7d jd 6h kc", "kd qd"], stock="qs qc 10s", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["?", "1", "f"])
    player.move(turn)
    help_at = next(i for i, line in enumerate(out) if line.startswith("How a move goes"))
    assert out[help_at + 1].strip().startswith("you put 9s")  # nothing between the help and the next answer


def test_bot_output_is_shown_as_printed_by_its_speaker():
    player = HumanPlayer(0, show=lambda _: None, symbols=False)
    player.names = ("human", "greedy")
    lines = player.news(
        [{"event": "say", "seat": 1, "text": "hello", "output": True}, {"event": "say", "seat": 1, "text": "hi"}]
    )
    assert lines == ["greedy prints: hello", "greedy says: hi"]


# -- the rough edges of issue 18 (item 9): each failed on the code before the fix ----------

#: A card as the referee writes it (``qc``, ``10h``): what a person never sees on a screen with symbols.
CARD_TEXT = re.compile(r"\b(?:10|[6-9jqka])[schd]\b")


def test_a_first_move_that_ends_by_itself_shows_the_hand(scripted_game):
    # The opening kh is seat 0's put (R3.3); no other king: the move ends with no question.
    game = scripted_game(["7s 9c", "kd qd"], stock="qs", opening="kh")
    player, turn, out = seat_human(game, [])
    player.move(turn)
    assert turn.finished
    hand = said(out, "Your hand:")
    assert hand and "7s" in hand[0] and "9c" in hand[0], out
    ends = next(i for i, line in enumerate(out) if "your move ends" in line)
    assert out.index(hand[0]) < ends  # shown before the move is over


def test_a_forced_draw_that_ends_the_move_shows_the_hand_with_the_card(scripted_game):
    game = scripted_game(["kc", "kd qd"], stock="qs 7s", opening="10h", first_move=False)
    player, turn, out = seat_human(game, [])
    player.move(turn)
    hand = said(out, "Your hand:")
    assert hand and "kc" in hand[0] and "qs" in hand[0]


def test_refusals_name_cards_as_the_screen_shows_them(scripted_game):
    # 9h on top; the hand sorted: 1) 9♠ 2) 9♣ 3) K♣ 4) 7♦. K♣ is refused (R4.2); after 9♠,
    # 7♦ is refused (R4.3); then 9♣ or finish.
    game = scripted_game(["9s 9c 7d kc", "kd qd"], stock="qs qc 10s", opening="9h", first_move=False)
    out: list[str] = []
    player = HumanPlayer(0, ask=Script(["3", "1", "4", "f"]), show=out.append, symbols=True)
    player.start_game(GameInfo(0, ("human", "greedy"), CONTEST, "1"))
    player.move(Turn(game.move, EngineTable(game, 0, ("human", "greedy"))))
    refusals = said(out, "not allowed:")
    assert len(refusals) == 2, out
    assert "K\u2663 does not" in refusals[0] and "9\u2665" in refusals[0]
    assert "after 9\u2660 only cards of rank 9 may follow, not 7\u2666" in refusals[1]
    assert not [line for line in refusals if CARD_TEXT.search(line)], refusals


def test_refusals_keep_plain_card_texts_on_a_plain_terminal(scripted_game):
    game = scripted_game(["9s kc", "kd qd"], stock="qs", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["2", "1"])
    player.move(turn)
    assert said(out, "not allowed: R4.2: the first card must match 9h (suit h, rank 9 or a jack); kc does not")


@pytest.mark.parametrize(
    ("rules", "label"),
    [
        (CONTEST, "Rules: contest;"),
        (dataclasses.replace(CONTEST, limit=40), "Rules: contest with limit=40;"),
        (dataclasses.replace(variants()["stacked"], limit=40, burn=None), "Rules: stacked with limit=40, burn=None;"),
        (variants()["no-burn"], "Rules: no-burn;"),
    ],
)
def test_the_banner_names_every_knob_changed_from_the_named_rules(rules, label):
    out: list[str] = []
    player = HumanPlayer(0, show=out.append, symbols=False)
    player.start_game(GameInfo(0, ("human", "greedy"), rules, "1"))
    assert said(out, label), out
    assert said(out, f"exceeds {rules.limit}.")


def test_the_banner_at_the_terminal_under_a_changed_rule(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "q\n", "play", "human", "greedy", "--rule", "limit=40")
    assert code == 130
    assert "Rules: contest with limit=40;" in out


def test_digits_of_other_scripts_are_not_card_numbers(scripted_game):
    # "²".isdigit() is true and int("²") raises: the seat crashed on a typed superscript; "٢" (an
    # Arabic-Indic two) was read as card 2. Numbers are ASCII digits (arena/trust/numbers.py).
    game = scripted_game(["9s 7d jd 6h kc", "kd qd"], stock="qs qc 10s", opening="9h", first_move=False)
    player, turn, out = seat_human(game, ["²", "\u0662", "1", "f"])
    player.move(turn)
    assert said(out, "'²' is not a choice: type a card number (1-5)")
    assert said(out, "'\u0662' is not a choice: type a card number (1-5)")  # not card 2 (kc, refused by R4.2)
    assert [e["card"] for e in game.log if e["event"] == "put"][-1] == "9s"
