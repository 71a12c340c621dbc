"""A bot over protocol v1 (docs/protocol.md): standard library only, no arena import."""

import json
import sys
from typing import Any

#: Rank -> penalty points under the rules in force (start_game's rules).
POINTS: dict[str, int] = {}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive() -> Any:
    line = sys.stdin.readline()
    if not line:  # the stream is over
        sys.exit(0)
    return json.loads(line)


def simulate(plans: list[list[list[Any]]], worlds: int = 24, seed: int = 0, until: str = "round") -> list[Any]:
    """Searching ahead (docs/protocol.md): the referee plays each plan (a list of actions such as
    ``["put", "9h", None]``, ``["draw"]``, ``["finish"]``) in the same ``worlds`` worlds sampled from
    what this seat knows, then plays on with its heuristic to the end of the round (or game).
    Returns ``results[plan][world]``: ``scores``, ``points``, ``over``, ``in_round``, ``places``
    (or ``error`` where the plan was illegal). Call it during a move; the referee's CPU for it
    counts against this bot's move time. Not used below: examples/search.js shows a search."""
    send({"action": "simulate", "seed": seed, "worlds": worlds, "plans": plans, "until": until})
    return list(receive()["results"])


def best_suit(hand: list[str], card: str) -> str | None:
    counts: dict[str, int] = {}
    for c in hand:
        if c != card and c[:-1] != "j":
            counts[c[-1]] = counts.get(c[-1], 0) + 1
    return max(counts, key=lambda s: counts[s]) if counts else None


def play_move(view: dict[str, Any]) -> None:
    """One move: put while something fits, draw when it must, then finish."""
    while True:
        if view["puttable"]:
            card = max(view["puttable"], key=lambda c: POINTS[c[:-1]])
            suit = best_suit(view["hand"], card) if card.startswith("j") else None
            send({"action": "put", "card": card, "suit": suit})
        elif not view["can_finish"] and view["can_draw"]:
            send({"action": "draw"})
        else:
            send({"action": "finish"})
            return
        answer = receive()
        if answer["type"] != "ok":  # an error: nothing changed; give up the move as well as we can
            send({"action": "finish"} if view["can_finish"] else {"action": "error", "message": answer["message"]})
            return
        view = answer["view"]


def main() -> None:
    while True:
        message = receive()
        if message["type"] == "start_game":
            POINTS.clear()
            POINTS.update(message["rules"]["points"])
            send({"type": "ready"})
        elif message["type"] == "move":
            play_move(message["view"])
        # end_round and end_game need no answer


main()
