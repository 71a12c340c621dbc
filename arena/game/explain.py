"""The rules in force as a short text for a terminal (``arena rules``)."""

from __future__ import annotations

from .rules import Rules


def describe_rules(rules: Rules) -> str:
    """A page of the rules in force, knobs filled in, changed knobs marked ``*``."""
    changed = rules.changed()

    def mark(*keys: str) -> str:
        return " *" if any(k in changed for k in keys) else ""

    pts = rules.points
    table = (
        ", ".join(f"{r}={pts[r]}" for r in ("10", "j", "q", "k", "a"))
        + ", 6-9="
        + (str(pts["6"]) if len({pts[r] for r in ("6", "7", "8", "9")}) == 1 else "/".join(str(pts[r]) for r in "6789"))
    )
    first = (
        "seat (r-1) mod n in round r"
        if rules.first_player == "rotate"
        else "the previous round's winner (round 1: seat 0)"
    )
    burn = f"a score of exactly {rules.burn} burns to 0" if rules.burn is not None else "no burn"
    lines = [
        f"Yard bridge, variant {rules.name!r}"
        + (f" (changed: {', '.join(sorted(changed))})" if changed else " (the contest rules)"),
        "",
        "R1  36 cards: suits s c h d, ranks 6 7 8 9 10 j q k a; written 10h, jd, as.",
        f"R1.3 points left in hand: {table}{mark('points')}",
        f"R2  2-6 players; the game ends after a round where a score exceeds {rules.limit}{mark('limit')}"
        f" (or after {rules.max_rounds} rounds{mark('max_rounds')}).",
        f"R3  each round: {rules.hand_size} cards each{mark('hand_size')}; "
        f"first player: {first}{mark('first_player')};",
        "    the stock's top card opens the pile as the first player's put.",
        "R4  a move: put a matching card (a jack, the suit to follow, or the top's rank), then any cards of",
        "    that same rank; or, before any put, draw one card (then you may put a match). Finish after a put or draw.",
        "R5  a six you put must be covered (its suit, a six or a jack); draw until you can cover.",
        "R6  at the finish the final same-rank group hits the next players, one per card:",
        "    7: draw 1; 8: draw 2 and lose a turn; a: lose a turn; j: orders the suit to follow.",
    ]
    if rules.stacked_effects:
        lines.append(f"    stacked effects{mark('stacked_effects')}: the whole group hits the next player only.")
    lines += [
        "R7  an empty stock is refilled from the pile (all but the top), shuffled.",
        f"R8  a round ends when a move finishes with an empty hand; hands score their points; {burn}{mark('burn')};",
        f"    a round stops with no winner after {rules.max_moves} moves{mark('max_moves')}.",
        f"R9  players over {rules.limit} lose; places by final score, lowest first.",
    ]
    if rules.jack_finish:
        lines.append(
            f"Jack finish{mark('jack_finish')}: going out on jacks takes {rules.jack_finish} per jack off the winner."
        )
    if rules.teams:
        lines.append(
            f"Teams{mark('teams')}: seats i and i+n/2 are partners; a team loses when a member exceeds the limit."
        )
    return "\n".join(lines)
