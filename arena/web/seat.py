"""The browser seat: the terminal human seat (:class:`~arena.playing.human.HumanPlayer`) driven from a web page.

:class:`WebHumanPlayer` *is* the terminal seat with its two ends replaced:
its questions wait for a click sent by the page (:class:`SeatState` passes
it over from the server's thread), and its lines go to the page instead of
the terminal. So the browser seat has exactly the terminal seat's rules,
forced actions and refusals: a put the rules forbid is refused with the same
``not allowed: R4.2 ...`` line. The table itself the page draws from the
public history (R10) and the seat's own hand.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..botapi.turn import Turn
from ..game.cards import SUITS, Card
from ..game.engine import GameResult, RoundResult
from ..game.referee import GameInfo
from ..playing.human import HumanLeft, HumanPlayer
from ..seats.contract import InProcessFactory

ACTIONS = ("put", "draw", "finish", "leave")


class BadAction(ValueError):
    """A request from the page that is not an action (refused with HTTP 400)."""


def plain(value: Any) -> Any:
    """Read-only history events (mapping proxies, tuples) as JSON-ready data."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def check_action(data: Any) -> dict[str, Any]:
    """A page's action, checked for shape (the rules are the referee's business).

    :raises BadAction: not an object with a known ``action``, a card text, a suit.
    """
    if not isinstance(data, dict) or data.get("action") not in ACTIONS:
        raise BadAction(f"an action is an object with 'action' one of {', '.join(ACTIONS)}")
    out: dict[str, Any] = {"action": data["action"]}
    if data["action"] == "put":
        try:
            out["card"] = str(Card(data.get("card")))  # type: ignore[arg-type]  # Card refuses non-text
        except ValueError as exc:
            raise BadAction(str(exc)) from None
        suit = data.get("suit")
        if suit is not None and suit not in SUITS:
            raise BadAction("R6.4: a jack orders one of the suits s, c, h, d")
        out["suit"] = suit
    return out


class SeatState:
    """What the page sees, versioned, and the actions it sends; shared by the referee's
    thread and the server's threads."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.version = 0
        self.state: dict[str, Any] = {"phase": "waiting", "events": [], "messages": [], "hand": []}
        self.actions: queue.Queue[dict[str, Any]] = queue.Queue()
        self.fetched = 0  # the newest version a page has read

    def publish(self, **changes: Any) -> None:
        with self.cond:
            self.state.update(changes)
            self.version += 1
            self.cond.notify_all()

    def snapshot(self, after: int = -1, timeout: float = 0.0) -> dict[str, Any]:
        """The state, once its version is past ``after`` (or ``timeout`` seconds have passed)."""
        with self.cond:
            self.cond.wait_for(lambda: self.version > after, timeout=timeout)
            self.fetched = max(self.fetched, self.version)
            self.cond.notify_all()
            return {**self.state, "version": self.version}

    def wait_fetched(self, timeout: float) -> bool:
        """Wait until a page has read the newest state (so the last result reaches it)."""
        with self.cond:
            return self.cond.wait_for(lambda: self.fetched >= self.version, timeout=timeout)

    def send(self, action: dict[str, Any]) -> None:
        self.actions.put(check_action(action))

    def next_action(self, stop: Callable[[], bool] = lambda: False) -> dict[str, Any]:
        """Block until the page sends an action (in short waits, so Ctrl-C gets through)."""
        while not stop():
            try:
                return self.actions.get(timeout=0.25)
            except queue.Empty:
                continue
        raise HumanLeft("left the game (the server stopped)")


class WebHumanPlayer(HumanPlayer):
    """The terminal human seat, asking and telling through a :class:`SeatState`."""

    #: The page has buttons for leaving and no help command: the terminal's hint is not shown.
    HOW_TO = ""

    def __init__(self, seat: int, shared: SeatState) -> None:
        super().__init__(seat, ask=self._ask, show=self._show, symbols=True)
        self.shared = shared
        self.lines: list[str] = []
        self.suit: str | None = None  # the suit sent with a jack, for the question that follows

    # the page draws the table: the terminal's table and hand listings are not needed
    def show_state(self, turn: Turn) -> None:
        pass

    def show_hand(self, turn: Turn, options: Sequence[Card], can_draw: bool, can_finish: bool) -> None:
        pass

    def show_held(self, turn: Turn) -> None:
        """A move that ends with no question: the page gets the hand now, not at the next question."""
        self.hand_shown = True
        self.shared.publish(**self._view(turn, "busy"))

    def _show(self, text: str) -> None:
        for line in text.splitlines() or [""]:
            if line.strip():
                self.lines.append(line.rstrip())
        del self.lines[:-40]

    def _view(self, turn: Turn | None, phase: str, prompt: str = "") -> dict[str, Any]:
        state: dict[str, Any] = {
            "phase": phase,
            "seat": self.seat,
            "prompt": prompt,
            "messages": list(self.lines),
            "hint": "",
        }
        if turn is not None:
            state["events"] = plain(turn.history)
            state["hand"] = [str(c) for c in self.sorted_hand(turn)]
            if phase == "move":
                state["puttable"] = [str(c) for c in turn.puttable()]
                state["can_draw"], state["can_finish"] = turn.can_draw(), turn.can_finish()
                put = turn.put_this_move
                if put and put[-1].rank == "6" and not state["can_finish"]:
                    state["hint"] = "Cover the six (R5): its suit, a six or a jack."
                elif put and state["puttable"]:
                    state["hint"] = f"You may add cards of rank {put[-1].rank.upper()} (R4.3) or finish."
                elif turn.first and not put[1:]:
                    state["hint"] = "You start the round: the opening card counts as your put (R3.3)."
                elif state["can_draw"]:
                    state["hint"] = "Your move: click a card to put it, or draw from the stock."
                else:
                    state["hint"] = "Your move: click a card to put it, or finish the move."
        return state

    def ask_suit(self, jack: Card) -> str:
        """The suit a jack orders (R6.4): the one the page sent with the jack, else the page's suit
        buttons. The terminal's numbered menu is not said: it is no message for the page."""
        if self.suit is not None:
            suit, self.suit = self.suit, None
            return suit
        while True:
            answer = self.read("suit")  # a suit letter, "" (keep the jack's own), or "?" (not a suit)
            if answer in SUITS:
                return answer
            if not answer:
                return jack.suit

    def _ask(self, prompt: str) -> str:
        prompt_kind = "suit" if prompt.startswith("suit") else "choice"
        if prompt_kind == "choice":
            self.suit = None
        self.shared.publish(**self._view(self.last_turn, "move", prompt_kind))
        action = self.shared.next_action()
        self.lines.clear()
        self.shared.publish(phase="busy", puttable=[], can_draw=False, can_finish=False)
        kind = action["action"]
        if kind == "leave":
            raise HumanLeft("left the game (from the browser)")
        if prompt_kind == "suit" and kind != "put":  # no suit (a draw is no "d" for diamonds): asked again
            return "?"
        if kind == "draw":
            return "d"
        if kind == "finish":
            return "f"
        if prompt_kind == "suit":  # a put while asked for a suit: take its suit, or keep the jack's own
            return action.get("suit") or ""
        self.suit = action.get("suit")
        return str(action["card"])

    def start_game(self, info: GameInfo) -> None:
        self.lines.clear()
        super().start_game(info)
        self.shared.publish(phase="busy", events=[], hand=[], messages=list(self.lines), game=info.game, result=None)

    def end_round(self, result: RoundResult) -> None:
        super().end_round(result)
        self.shared.publish(**self._view(self.last_turn, "busy"))

    def end_game(self, result: GameResult) -> None:
        super().end_game(result)
        view = self._view(self.last_turn, "over")
        view["result"] = {"places": list(result.places), "scores": list(result.scores), "rounds": result.rounds}
        self.shared.publish(**view)


def web_factory(shared: SeatState) -> InProcessFactory:
    """``factory(bot_key, seat) -> WebHumanPlayer`` for ``arena play human ... --web`` (the key is not used)."""

    def factory(bot_key: Any, seat: int) -> WebHumanPlayer:
        return WebHumanPlayer(seat, shared)

    return InProcessFactory("human", factory)
