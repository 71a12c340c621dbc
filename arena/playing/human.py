"""The human seat: a person plays at the terminal (``arena play human BOT...``).

:class:`HumanPlayer` implements the referee's ``Player`` protocol. Each move
it shows what happened since the person's last move (built from the public
history, R10), the table, the top card and the suit to follow, and the hand
with numbers; then it reads one choice a line: a card number (or the card's
text, ``9h``), ``d`` to draw, ``f`` to finish, ``?`` for help, ``q`` to leave.
Illegal choices are re-asked with the referee's own reason, which names the
rule (``R4.2: the first card must match ...``). Actions with no alternative
(the draw when nothing matches, the finish when nothing more can be put) are
done for the person and said so.

Input comes from :func:`input` (so from ``sys.stdin``), output goes through
:func:`print`; both can be replaced, which is how the tests script a session.
Ctrl-C propagates as :class:`KeyboardInterrupt`; the end of input or ``q``
raises :class:`HumanLeft`, a ``KeyboardInterrupt`` too, so ``arena play``
stops the match the same clean way.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..botapi.turn import Turn
from ..errors import IllegalMove
from ..game.cards import RANKS, SUIT_NAMES, SUIT_SYMBOLS, SUITS, Card
from ..game.engine import GameResult, RoundResult
from ..game.referee import GameInfo
from ..game.rules import CONTEST, Rules
from ..seats.contract import InProcessFactory
from ..trust.numbers import whole_number
from ..trust.text import escape
from .narrate import narrate

Ask = Callable[[str], str]
Show = Callable[[str], None]

HELP = """\
How a move goes (see `arena rules`):
  R4.2 the first card you put must match: a jack, the suit to follow, or the top's rank.
  R4.3 after a put you may add cards of the same rank, one at a time (any suit).
  R4.4 before putting anything you may draw one card; then put a match or finish.
  R5   a six you put must be covered (its suit, a six or a jack); you draw until you can.
  R6   your last same-rank group hits the next players: 7 draw 1, 8 draw 2 and lose a turn,
       ace lose a turn; a jack orders the suit to follow.
  R8   the round ends when someone empties their hand; cards left in hand score
       (10/q/k 10, a 15, j 20) and a score of exactly 125 burns to 0.
Type a card number (or the card, like 9h), d to draw, f to finish, q to leave."""

#: A card's text inside a refusal (``qc``, ``10h``), and the suit and rank a refusal names.
_CARD_TEXT = re.compile(r"\b(?:10|[6-9jqka])[schd]\b")
_SUIT_TEXT = re.compile(r"\bsuit ([schd])\b")
_RANK_TEXT = re.compile(r"\brank (10|[6-9jqka])\b")


def rules_label(rules: Rules) -> str:
    """The rules in force in a few words: the variant's name and every knob changed from it
    (``contest with limit=40``), so a banner never names rules that are not the ones played."""
    from ..plugins import variants

    base = variants().get(rules.name) or CONTEST
    mine, theirs = rules.to_dict(), base.to_dict()
    changed = [f"{k}={v}" for k, v in mine.items() if k != "name" and theirs.get(k) != v]
    return f"{rules.name} with {', '.join(changed)}" if changed else rules.name


def plural(count: int, noun: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class HumanLeft(KeyboardInterrupt):
    """The person left the game (``q`` or the end of input): stops the match like Ctrl-C."""


class BadInput(ValueError):
    """An answer that is not one of the choices; the message says what to type."""


def can_encode(text: str, stream: Any = None) -> bool:
    """Whether ``stream`` (default stdout) can print ``text`` (suit symbols in a plain terminal)."""
    encoding = getattr(stream if stream is not None else sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class HumanPlayer:
    """A seat played by a person through ``ask`` (a line of input) and ``show`` (a line of output)."""

    #: How to get help and leave, said once a game (the browser seat has buttons instead).
    HOW_TO = "Type ? for help, q to leave."

    def __init__(
        self,
        seat: int = 0,
        *,
        name: str = "human",
        ask: Ask | None = None,
        show: Show | None = None,
        symbols: bool | None = None,
    ) -> None:
        self.name = name
        self.seat = seat
        self.ask = ask
        self.show = show
        self.symbols = can_encode("".join(SUIT_SYMBOLS.values())) if symbols is None else symbols
        self.names: tuple[str, ...] = ()
        self.rules: Rules = CONTEST
        self.seen = 0  # history events already told to the person
        self.drew = False  # whether this move drew (R4.4), for the reason a move ends
        self.last_turn: Turn | None = None
        self.hand_shown = False  # whether this move showed the hand (a move that ends by itself shows it too)
        #: This move's card numbers: slot i is card number i + 1, None once put.
        #: Numbers stay put within a move (a put leaves a gap, a draw is added
        #: at the end), so a number typed from an earlier listing still names
        #: the same card.
        self.numbers: list[Card | None] = []

    # -- input and output -------------------------------------------------
    def say(self, text: str = "") -> None:
        if self.show is not None:
            self.show(text)
        else:
            print(text, flush=True)

    def read(self, prompt: str) -> str:
        """One answer, stripped. :raises HumanLeft: end of input."""
        try:
            line = self.ask(prompt) if self.ask is not None else input(prompt)
        except EOFError:
            self.say("")  # end the prompt's line before the closing message
            raise HumanLeft("left the game (end of input)") from None
        except KeyboardInterrupt:
            self.say("")
            raise
        return line.strip()

    def card(self, card: Card | str) -> str:
        card = Card(card)
        return card.symbol if self.symbols else str(card)

    def suit_text(self, suit: str) -> str:
        return f"{SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}" if self.symbols else f"{suit} ({SUIT_NAMES[suit]})"

    def who(self, seat: int) -> str:
        """``you`` for this seat; others by name, with ``#seat`` when names repeat."""
        if seat == self.seat:
            return "you"
        names = self.names
        if seat >= len(names):
            return f"seat {seat}"
        name = escape(names[seat], 60)  # a bot's name is its author's text: never raw to the terminal
        return name if names.count(names[seat]) == 1 else f"{name}#{seat}"

    # -- the Player protocol -------------------------------------------------
    def start_game(self, info: GameInfo) -> None:
        self.seat = info.seat
        self.names = tuple(info.players)
        self.rules = info.rules
        self.seen = 0
        others = ", ".join(f"{self.who(s)} (seat {s})" for s in range(len(self.names)) if s != self.seat)
        self.say(f"Game {info.game}: you sit at seat {info.seat}; playing against {others}.")
        self.say(
            f"Rules: {rules_label(self.rules)}; the game ends when a score exceeds {self.rules.limit}."
            + (f" {self.HOW_TO}" if self.HOW_TO else "")
        )

    def move(self, turn: Turn) -> None:
        if not self.names:
            self.names = tuple(p.name for p in turn.players)
        self.last_turn = turn
        self.drew = False
        self.hand_shown = False
        self.numbers = []
        self.show_state(turn)
        while not turn.finished:
            if not self.step(turn):
                return

    def end_round(self, result: RoundResult) -> None:
        if self.last_turn is not None:  # how the round ended, before its result
            history = self.last_turn.history
            news = self.news(history[self.seen :])
            self.seen = len(history)
            if news:
                self.say("")
                self.say("Since your last move:")
                for line in news:
                    self.say("  " + line)
        winner = (
            "nobody went out (move guard, R8.4)"
            if result.winner is None
            else ("you went out!" if result.winner == self.seat else f"{self.who(result.winner)} went out")
        )
        self.say("")
        self.say(f"== Round {result.round} over: {winner}")
        width = max(len(self.who(s)) for s in range(len(result.scores)))
        for s, (points, score) in enumerate(zip(result.points, result.scores, strict=True)):
            burned = f"  hit exactly {self.rules.burn}: burned to 0 (R8.3)" if s in result.burned else ""
            self.say(f"   {self.who(s):<{width}}  {'+' + str(points):>4}  score {score}{burned}")
        self.say("")

    def end_game(self, result: GameResult) -> None:
        self.say(f"== Game over after {result.rounds} round{'s' if result.rounds != 1 else ''}.")
        order = sorted(range(len(result.places)), key=lambda s: (result.places[s], s))
        width = max(len(self.who(s)) for s in order)
        for s in order:
            lost = f"  over {self.rules.limit}: loses" if s in result.losers else ""
            self.say(f"   {result.places[s]}. {self.who(s):<{width}}  {result.scores[s]}{lost}")
        self.say(f"You placed {result.places[self.seat]} of {len(result.places)}.")

    def close(self) -> None:
        pass

    # -- one move --------------------------------------------------------------
    def step(self, turn: Turn) -> bool:
        """Do one action: forced ones at once, else ask. False when nothing at all can be done."""
        options = turn.puttable()
        can_draw, can_finish = turn.can_draw(), turn.can_finish()
        if not options and can_finish and not can_draw:
            if turn.put_this_move:
                why = "nothing more to put"
            elif self.drew:
                why = "the card drawn does not match"
            else:
                why = "nothing to put and nothing to draw (R7.2)"
            if not self.hand_shown:  # the move ends without a question: show what it leaves you
                self.show_held(turn)
            self.say(f"  ({why}: your move ends)")
            self.finish(turn)
            return True
        if not options and can_draw and not can_finish:
            if turn.put_this_move:
                reason = f"no card covers the six {self.card(turn.top)}, so you draw (R5.3)"
            else:
                reason = f"nothing matches {self.card(turn.top)}, so you draw (R4.4)"
            drawn = turn.draw()
            self.drew = True
            self.say(f"  {reason}: {self.card(drawn)}")
            return True
        if not options and not can_draw and not can_finish:
            return False  # cannot happen under the rules; the referee completes the move
        self.show_hand(turn, options, can_draw, can_finish)
        while True:
            answer = self.read("your choice> ")
            try:
                self.act(turn, answer)
                return True
            except IllegalMove as exc:
                self.say(f"  not allowed: {self.refusal(exc)}")
            except BadInput as exc:
                if str(exc):
                    self.say(f"  {exc}")

    def act(self, turn: Turn, answer: str) -> None:
        """Carry out one answer. :raises IllegalMove: (with its rule) or :class:`BadInput`."""
        text = answer.lower()
        numbered = self.numbered_hand(turn)
        if text in ("?", "h", "help"):
            self.say(HELP)
            raise BadInput("")
        if text in ("q", "quit", "exit"):
            raise HumanLeft("left the game (quit)")
        if text in ("d", "draw"):
            drawn = turn.draw()
            self.drew = True
            self.say(f"  you draw {self.card(drawn)}")
            return
        if text in ("f", "finish"):
            self.finish(turn)
            return
        if not text:
            raise BadInput(self.usage(numbered))
        number = whole_number(text, high=10**6, given="text")
        if number is not None:
            by_number = dict(numbered)
            if number not in by_number:
                raise BadInput(f"there is no card {number}: {self.numbers_text(numbered)}")
            card = by_number[number]
        else:
            card = self.parse_card(text, numbered)
        suit = None
        if card.rank == "j" and turn.can_put(card):
            suit = self.ask_suit(card)
        turn.put(card, suit)
        ordered = f", ordering {self.suit_text(turn.suit)}" if card.rank == "j" else ""
        self.say(f"  you put {self.card(card)}{ordered}")

    def finish(self, turn: Turn) -> None:
        self.seen = len(turn.history)  # what follows (effects of this move) is news next time
        turn.finish()

    @staticmethod
    def number_range(numbered: Sequence[tuple[int, Card]]) -> str:
        """``1-5``, or with gaps after a put ``1, 3, 4``."""
        numbers = [n for n, _ in numbered]
        if numbers == list(range(1, len(numbers) + 1)):
            return f"1-{len(numbers)}"
        return ", ".join(map(str, numbers))

    def numbers_text(self, numbered: Sequence[tuple[int, Card]]) -> str:
        return f"your cards are numbered {self.number_range(numbered)}"

    def usage(self, numbered: Sequence[tuple[int, Card]]) -> str:
        return f"type a card number ({self.number_range(numbered)}), d to draw, f to finish, ? for help, q to leave"

    def parse_card(self, text: str, numbered: Sequence[tuple[int, Card]]) -> Card:
        plain = text
        for letter, symbol in SUIT_SYMBOLS.items():
            plain = plain.replace(symbol, letter)
        try:
            return Card(plain)
        except ValueError:
            raise BadInput(f"{text!r} is not a choice: {self.usage(numbered)}") from None

    def ask_suit(self, jack: Card) -> str:
        """Which suit a jack orders (R6.4); Enter keeps the jack's own suit."""
        menu = "  ".join(f"{i}) {self.suit_text(s)}" for i, s in enumerate(SUITS, 1))
        self.say(f"  {self.card(jack)} orders a suit (R6.4): {menu}")
        while True:
            text = self.read(f"suit [Enter: {SUIT_NAMES[jack.suit]}]> ").lower()
            if not text:
                return jack.suit
            if text in ("q", "quit", "exit"):
                raise HumanLeft("left the game (quit)")
            for letter, symbol in SUIT_SYMBOLS.items():
                text = text.replace(symbol, letter)
            if text in SUITS:
                return text
            if (choice := whole_number(text, 1, 4, given="text")) is not None:
                return SUITS[choice - 1]
            for suit, name in SUIT_NAMES.items():
                if len(text) > 1 and name.startswith(text):
                    return suit
            self.say(f"  R6.4: a jack orders one of the four suits: type 1-4 or s, c, h, d, not {text!r}")

    # -- what the person sees ----------------------------------------------------
    @staticmethod
    def sorted_hand(turn: Turn) -> list[Card]:
        """The hand in a stable order for reading: by suit, then rank."""
        return sorted(turn.hand, key=lambda c: (SUITS.index(c.suit), RANKS.index(c.rank)))

    def numbered_hand(self, turn: Turn) -> list[tuple[int, Card]]:
        """``(number, card)`` for the hand; numbers are kept within a move (see :attr:`numbers`)."""
        hand = self.sorted_hand(turn)
        held = set(hand)
        self.numbers = [c if c in held else None for c in self.numbers]
        known = {c for c in self.numbers if c is not None}
        self.numbers.extend(c for c in hand if c not in known)
        return [(i, c) for i, c in enumerate(self.numbers, 1) if c is not None]

    def show_state(self, turn: Turn) -> None:
        history = turn.history
        round_no = sum(1 for e in history if e["event"] == "deal")
        self.say("")
        self.say(f"--- round {round_no}: your move (seat {turn.seat}) " + "-" * 20)
        news = self.news(history[self.seen :] if self.seen <= len(history) else history)
        if news:
            self.say("Since your last move:")
            for line in news:
                self.say("  " + line)
        players = turn.players
        width = max(len(self.who(p.seat)) for p in players)
        self.say("Players:")
        for p in players:
            skips = f", loses {p.skips} turn{'s' if p.skips != 1 else ''}" if p.skips else ""
            self.say(
                f"  {p.seat}  {self.who(p.seat):<{width}}  {p.cards:>2} card{'s' if p.cards != 1 else ' '}"
                f"  score {p.score}{skips}"
            )
        top = turn.top
        follow = f"suit to follow {self.suit_text(turn.suit)}"
        if top.rank == "j":
            follow += " (ordered by the jack)"
        self.say(
            f"Top card {self.card(top)}, {follow}. Stock: {plural(turn.stock, 'card')}; "
            f"pile: {plural(len(turn.pile), 'card')} this round."
        )
        if turn.first:
            opening = turn.put_this_move[0] if turn.put_this_move else top
            extra = "; it is a six, so you must cover it (R5)" if opening.rank == "6" else ""
            self.say(f"You start the round: the opening card {self.card(opening)} counts as your put (R3.3){extra}.")

    def refusal(self, exc: IllegalMove) -> str:
        """The referee's refusal with its cards, suits and ranks written as the screen shows them."""
        text = _CARD_TEXT.sub(lambda m: self.card(m.group(0)), exc.reason)
        if self.symbols:
            text = _SUIT_TEXT.sub(lambda m: f"suit {SUIT_SYMBOLS[m.group(1)]}", text)
        text = _RANK_TEXT.sub(lambda m: f"rank {m.group(1).upper()}", text)
        return f"{exc.rule}: {text}"

    def show_held(self, turn: Turn) -> None:
        """The hand, unnumbered: for a move that ends with no question asked."""
        self.hand_shown = True
        cards = "  ".join(self.card(c) for c in self.sorted_hand(turn)) or "no cards"
        self.say(f"Your hand: {cards}   ({turn.points()} points)")

    def show_hand(self, turn: Turn, options: Sequence[Card], can_draw: bool, can_finish: bool) -> None:
        numbered = self.numbered_hand(turn)
        self.hand_shown = True
        self.say(
            "Your hand: " + "  ".join(f"{i}) {self.card(c)}" for i, c in numbered) + f"   ({turn.points()} points)"
        )
        choices = []
        if options:
            legal = set(options)
            choices.append("put " + " ".join(f"{i}) {self.card(c)}" for i, c in numbered if c in legal))
        if can_draw:
            choices.append("d) draw")
        if can_finish:
            choices.append("f) finish")
        put = turn.put_this_move
        if put and put[-1].rank == "6" and not can_finish:
            self.say(f"Cover the six {self.card(put[-1])} (R5): its suit, a six or a jack.")
        elif put and options:
            self.say(f"You may add cards of rank {put[-1].rank.upper()} (R4.3) or finish.")
        self.say("You can: " + " | ".join(choices) + " | ? help | q leave")

    def news(self, events: Sequence[Mapping[str, Any]]) -> list[str]:
        """What happened in ``events`` (public history), one line per move or effect."""
        return narrate(events, self.seat, self.who, self.card, self.suit_text)


def human_factory(ask: Ask | None = None, show: Show | None = None, symbols: bool | None = None) -> InProcessFactory:
    """A factory ``factory(bot_key, seat) -> HumanPlayer`` for ``arena play human ...`` (a person
    needs no seed: the key is not used)."""

    def factory(bot_key: Any, seat: int) -> HumanPlayer:
        return HumanPlayer(seat, ask=ask, show=show, symbols=symbols)

    return InProcessFactory("human", factory)
