"""The public history told in words to a person at a seat (the human seats' "since your last move").

It reads only public events (R10: :mod:`arena.game.visibility` decides what they hold),
the way ``turn.history`` hands them to any bot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..trust.text import escape

EFFECT_NAMES = {"7": "effect of 7, R6.1", "8": "effect of 8, R6.2"}


def narrate(
    events: Sequence[Mapping[str, Any]],
    seat: int,
    who: Callable[[int], str],
    card: Callable[[str], str],
    suit_text: Callable[[str], str],
) -> list[str]:
    """What happened in ``events`` (public history, R10) as ``seat`` is told it, one line per
    move or effect; ``who`` names a seat (``you`` for ``seat``), ``card`` and ``suit_text``
    write a card and a suit as the person's screen shows them."""
    lines: list[str] = []
    parts: list[str] = []  # the current mover's actions: "drew a card", "put 9♥ 9♠"
    mover: int | None = None
    penalty: list[Any] = []  # [seat, rank, count] of a run of effect draws

    def flush() -> None:
        nonlocal mover
        if parts and mover is not None and mover != seat:
            lines.append(f"{who(mover)}: " + ", ".join(parts))
        parts.clear()
        mover = None

    def flush_penalty() -> None:
        if penalty:
            seat, rank, count = penalty
            name = who(seat)
            lines.append(
                f"{arrow()}{name} draw{'' if name == 'you' else 's'} {count} card{'s' if count != 1 else ''}"
                f" ({EFFECT_NAMES.get(rank, rank)})"
            )
            penalty.clear()

    def arrow() -> str:
        """Effects are indented under the move that caused them, when it was shown."""
        return "  -> " if lines and lines[-1][:1] not in (" ", "(") and ": " in lines[-1] else "-> "

    def action(seat: int) -> None:
        nonlocal mover
        if mover != seat:
            flush()
            mover = seat

    for e in events:
        kind = e["event"]
        if kind != "penalty":
            flush_penalty()
        if kind == "deal":
            flush()
            first = who(e["first"])
            lines.append(f"round {e['round']} dealt; {first} start{'' if first == 'you' else 's'}")
        elif kind == "put":
            if e.get("opening"):
                flush()
                owner = "your" if e["seat"] == seat else f"{who(e['seat'])}'s"
                lines.append(f"opening card {card(e['card'])}, counted as {owner} put (R3.3)")
                continue
            action(e["seat"])
            text = card(e["card"])
            if "suit" in e:
                text += f" ordering {suit_text(e['suit'])}"
            if parts and parts[-1].startswith("put "):
                parts[-1] += " " + text
            else:
                parts.append("put " + text)
        elif kind == "draw":
            action(e["seat"])
            if parts and parts[-1].startswith("drew "):
                count = 2 if parts[-1] == "drew a card" else int(parts[-1].split()[1]) + 1
                parts[-1] = f"drew {count} cards"
            else:
                parts.append("drew a card")
        elif kind == "finish":
            flush()
        elif kind == "penalty":
            flush()
            if penalty and penalty[0] == e["seat"] and penalty[1] == e["rank"]:
                penalty[2] += 1
            else:
                flush_penalty()
                penalty.extend([e["seat"], e["rank"], 1])
        elif kind == "skip":
            flush()
            name = who(e["seat"])
            lines.append(f"{arrow()}{name} lose{'' if name == 'you' else 's'} a turn")
        elif kind == "reshuffle":
            lines.append(f"(the pile was reshuffled into a stock of {e['stock']})")
        elif kind == "fault":
            lines.append(f"(fault by {who(e['seat'])}: {e['kind']})")
        elif kind == "say":
            verb = "prints" if e.get("output") else "says"
            lines.append(f"{who(e['seat'])} {verb}: {escape(e['text'], 400)}")
    flush_penalty()
    flush()
    return lines
