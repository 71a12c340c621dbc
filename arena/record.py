"""Game records (docs/record-format.md): writing JSON Lines, reading them back, and
printing a game as a readable log."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .cards import SUIT_SYMBOLS, Card
from .safetext import escape


class RecordWriter:
    """Appends games to one JSON Lines file, one event a line, a game at a time."""

    def __init__(self, path: str | Path, mode: str = "w") -> None:
        self.path = Path(path)
        self.file: IO[str] = open(self.path, mode, encoding="utf-8")

    def write_game(self, events: Iterable[dict[str, Any]]) -> None:
        dumps = json.dumps
        self.file.write("".join(dumps(e, separators=(",", ":")) + "\n" for e in events))
        self.file.flush()

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordError(ValueError):
    """A record file is not in the game-record format."""


def read_games(path: str | Path) -> Iterator[list[dict[str, Any]]]:
    """Yield each game of a record file as its list of events.

    :raises RecordError: a line is not JSON, has no ``event``, or a game lacks its ``game`` line.
    """
    game: list[dict[str, Any]] | None = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RecordError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(event, dict) or "event" not in event:
                raise RecordError(f"{path}:{number}: a record line is an object with an 'event'")
            if event["event"] == "game":
                if game:
                    yield game
                game = [event]
            elif game is None:
                raise RecordError(f"{path}:{number}: the first line of a game is its 'game' line")
            else:
                game.append(event)
    if game:
        yield game


#: How a penalty draw names the rank that caused it: "an 8", never "a 8".
EFFECT_RANKS = {"7": "a 7", "8": "an 8", "a": "an ace"}


def sym(card: str) -> str:
    """``10h`` -> ``10♥`` for people."""
    return Card(card).symbol


def format_game(events: list[dict[str, Any]], *, seat: int | None = None) -> Iterator[str]:
    """A game as a readable log: one move a line, then round results.

    With ``seat``, what that seat could not see is left out (R10): other hands and
    draws, the seed, other seats' fault details and printed output.
    """
    header = events[0]
    names = {p["seat"]: p["name"] for p in header.get("players", [])}

    def who(s: int) -> str:
        return f"{escape(names.get(s, '?'), 60)}#{s}"

    shown_seed = f"  seed {header.get('seed')}" if seat is None else ""
    yield f"game {header.get('game')}{shown_seed}  rules {header.get('rules', {}).get('name', 'contest')}"
    yield "players: " + ", ".join(who(s) for s in sorted(names))
    line: list[str] = []
    mover: int | None = None

    def flush() -> Iterator[str]:
        if line:
            yield f"  {who(mover) if mover is not None else ''}: " + " ".join(line)
            line.clear()

    for e in events[1:]:
        kind = e["event"]
        if kind == "deal":
            yield from flush()
            yield f"-- round {e['round']}: {who(e['first'])} starts; scores {e['scores']}"
            for s, hand in enumerate(e["hands"]):
                shown = " ".join(sym(c) for c in hand) if seat in (None, s) else f"{len(hand)} cards"
                yield f"   {who(s)}: {shown}"
        elif kind == "put":
            if mover != e["seat"]:
                yield from flush()
                mover = e["seat"]
            text = ("opening " if e.get("opening") else "") + sym(e["card"])
            if "suit" in e and not e.get("opening"):
                text += f"->{SUIT_SYMBOLS[e['suit']]}"
            if line and line[-1].startswith("draws "):
                text = "puts " + text  # "draws 8♣ puts 8♣", never "draws 8♣ 8♣"
            line.append(text)
        elif kind == "draw":
            if mover != e["seat"]:
                yield from flush()
                mover = e["seat"]
            line.append("draws " + (sym(e["card"]) if seat in (None, e["seat"]) else "a card"))
        elif kind == "finish":
            if mover != e["seat"]:
                yield from flush()
                mover = e["seat"]
            line.append("|")
            yield from flush()
            mover = None
        elif kind == "penalty":
            card = sym(e["card"]) if seat in (None, e["seat"]) else "a card"
            yield f"    {who(e['seat'])} draws {card} ({EFFECT_RANKS.get(e['rank'], e['rank'])})"
        elif kind == "skip":
            yield f"    {who(e['seat'])} loses a turn"
        elif kind == "reshuffle":
            yield f"    pile reshuffled into a stock of {len(e['stock'])}"
        elif kind == "fault":
            detail = f": {escape(e.get('detail', ''), 400)}" if seat in (None, e["seat"]) else ""
            yield f"    FAULT {who(e['seat'])} {escape(e['kind'], 40)}{detail}"
        elif kind == "say":
            if e.get("output") and seat not in (None, e["seat"]):
                continue  # printed output is the organiser's, not the table's
            if mover != e["seat"]:  # said or printed outside the speaker's own move
                yield from flush()
                mover = e["seat"]
            line.append(f"{'prints' if e.get('output') else 'says'} {escape(repr(e['text']))}")
        elif kind == "round":
            yield from flush()
            winner = "no winner (move guard)" if e["winner"] is None else f"{who(e['winner'])} went out"
            burned = f"; burned: {', '.join(who(s) for s in e['burned'])}" if e["burned"] else ""
            yield f"== round {e['round']}: {winner}; points {e['points']}; scores {e['scores']}{burned}"
        elif kind == "end":
            yield from flush()
            losers = ", ".join(who(s) for s in e["losers"]) or "none"
            yield (
                f"## game over after {e['rounds']} rounds: scores {e['scores']}; places {e['places']}; losers {losers}"
            )
