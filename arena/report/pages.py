"""The report's HTML pages: standings, the game list, one page per bot.

The markup is in ``arena/web/templates/report_*.html.j2``, rendered by the
escaping engine (:mod:`arena.web.render`): every text from the database
(labels, names, fault details, authors, game keys) and every number reaches
the page escaped; numbers are formatted only when they are real numbers.
This module gathers what each page shows (a bot's: :class:`BotStats`, which
:mod:`.site` fills from the database). Rows carry ``data-bot`` and
``data-rank`` for tests and users' scripts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..tournament.results.standings import GAUNTLET_NOTE, RANK_NOTE
from ..web.render import real, render
from .charts import heat_map, interval_chart

if TYPE_CHECKING:
    from ..tournament.db.rows import BotRow
    from ..tournament.results.finished import GameResult
    from ..tournament.results.resultset import ResultSet


@dataclass
class BotStats:
    """What a bot's page shows, gathered from the database."""

    bot: BotRow
    author: str | None = None
    games: list[dict[str, Any]] = field(default_factory=list)  # one per game it played
    faults: list[dict[str, Any]] = field(default_factory=list)
    moves: int = 0
    seconds: float = 0.0
    worst: float = 0.0
    timed: bool = False


#: A report's title when none is given (``arena report --title``).
TITLE = "Yard bridge tournament"
#: What a house bot's author cell says (the organiser's own AI: ``arena report --house``).
HOUSE = "house bot"

#: The most places a table-size row counts (the game seats far fewer): bounds the work a bad size can ask.
MAX_SIZE = 64


def file_name(path: str | None) -> str | None:
    """A bot's file as the published site names it: its name alone, never the folders of the machine
    that ran the tournament (docs/RULINGS.md 138)."""
    if not path:
        return None
    return PurePath(path.rstrip("/\\")).name or None


def viewer_link(key: Any, up: str = "", step: str = "0") -> str:
    """The viewer's address for a game (a relative link: no scheme a key could choose)."""
    return f"{up}viewer.html#game={quote(str(key), safe='')}&step={step}"


def _order(value: Any) -> tuple[int, Any, str]:
    """A sort key for values that should be ints or tuples of ints, but might not be."""
    items = value if isinstance(value, tuple) else (value,)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return (0, value, "")
    return (1, (), str(value))


def _mean(values: Sequence[Any]) -> float | None:
    numbers = [x for x in map(real, values) if x is not None]
    return sum(numbers) / len(numbers) if numbers else None


def authors_ranks(rows: Sequence[dict[str, Any]], house: frozenset[str]) -> dict[str, int]:
    """Each bot but the house's, ranked among themselves as the standings rank (equal scores share)."""
    out: dict[str, int] = {}
    before: dict[str, Any] | None = None
    for r in rows:
        if r["bot"] in house:
            continue
        tied = before is not None and r["games"] and before["games"] and r["score"] == before["score"]
        out[r["bot"]] = out[before["bot"]] if tied and before is not None else len(out) + 1
        before = r
    return out


def _scope(
    title: str,
    scope: dict[str, Any],
    index: dict[str, int],
    size: Any,
    charts: bool,
    house: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Standings, score and rating charts and the head-to-head heat map of one scope; with
    ``house``, those bots marked and the others' ranks among themselves."""
    teams = any("members" in r for r in scope["standings"])
    if teams:  # a team's row names its members, each linked to its bot's page
        rows = [
            dict(r, links=[(m, f"bots/bot-{index.get(m, '')}.html") for m in r["members"]]) for r in scope["standings"]
        ]
    else:
        rows = [dict(r, href=f"bots/bot-{index.get(r['bot'], '')}.html") for r in scope["standings"]]
    ranks = authors_ranks(rows, house) if house else {}
    for r in rows:
        r["house"] = r["bot"] in house
        r["authors_rank"] = ranks.get(r["bot"])
    out = {"title": title, "size": size, "games": scope["games"], "blocks": scope["blocks"], "rows": rows}
    out["teams"] = teams
    out["house"] = bool(house) and not teams
    out["authors"] = any(r.get("author") for r in rows) or out["house"]  # a column when a manifest named one
    out["charts"] = None
    if not charts:
        return out
    score = interval_chart(
        [(r["bot"], r["score"], r["score_ci"]) for r in rows],
        lo=0,
        hi=1,
        ticks=(0, 0.25, 0.5, 0.75, 1),
        title="Score (1 = always first, 0 = always last) with its 95% interval",
    )
    rated = [(r["bot"], real(r["mu"]), real(r["sigma"])) for r in rows]
    spans = [(m - 3 * s, m + 3 * s) for _, m, s in rated if m is not None and s is not None]
    lo = min(a for a, _ in spans) if spans else 0.0
    hi = max(b for _, b in spans) if spans else 1.0
    if math.isfinite(hi - lo) and hi - lo < 1e12:
        step = max(1, round((hi - lo) / 5))
        ticks: list[float] = [t for t in range(int(lo) - int(lo) % step, int(hi) + step, step) if lo <= t <= hi]
    else:
        ticks = [lo, hi] if math.isfinite(lo) and math.isfinite(hi) else []
    rating = interval_chart(
        [(bot, m, None if s is None else 3 * s) for bot, m, s in rated],
        lo=lo,
        hi=hi,
        ticks=ticks,
        title="Rating \u03bc \u00b1 3\u03c3 (OpenSkill; the left end is the ordinal)",
    )
    order = [r["bot"] for r in rows]
    cells = {}
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            cell = scope["head_to_head"].get(a, {}).get(b)
            if cell is not None and cell["above"] is not None:
                cells[(i, j)] = (cell["above"], cell["games"])
    heat = heat_map(order, cells, title="Head-to-head: share of shared games the row bot placed above the column bot")
    out["charts"] = {"score": score, "rating": rating, "heat": heat}
    return out


def header(results: ResultSet, bots: int) -> list[str]:
    """The facts above the standings: bots, games played of those planned, the schedule, the rules."""
    settings = results.stored.settings
    sizes = ", ".join(str(k) for k in settings.get("sizes", []))
    teams = results.stored.teams
    facts = [f"{len(teams)} teams of two ({bots} bots), partners opposite" if teams else f"{bots} bots"]
    labels = results.stored.labels
    if results.gauntlet and labels:
        facts.append(f"a gauntlet of {labels[0]} against a field of {len(labels) - 1}")
    if results.planned is None:  # adaptive: no fixed size, the run says why it stopped
        why = {
            "separated": "stopped when every comparison was separated",
            "budget": "stopped at its budget of games",
        }.get(results.status, "not finished")
        facts.append(
            f"{results.played} games played in an adaptive run (a first round of {results.first_round} games, "
            f"then rounds of duplicate deals where the order was unsettled; {why})"
        )
        facts.append(f"tables of {sizes} players")
    else:
        done = f"{results.played} of {results.planned} games played" + ("" if results.finished else " (not finished)")
        facts.append(done)
        facts.append(f"tables of {sizes} players")
        facts.append(f"{settings.get('games', '?')} deals per table, each played once per seat rotation")
    facts.append(rules_fact(settings.get("rules", {})))
    return facts


def rules_fact(rules: Any) -> str:
    """The rules in force: the variant's name and each knob changed from the contest's rules."""
    from ..game.rules import Rules

    name = rules.get("name", "contest") if isinstance(rules, dict) else "contest"
    try:
        changed = Rules.from_dict(rules).changed() if isinstance(rules, dict) else {}
    except (ValueError, TypeError):
        changed = {}
    return f"rules {name}" + "".join(
        f"{', changed: ' if i == 0 else ', '}{k} = {v}" for i, (k, v) in enumerate(sorted(changed.items()))
    )


def champion_line(doc: dict[str, Any], house: frozenset[str]) -> dict[str, Any]:
    """What the standings announce above the table: the champion, named only when separated from
    the next (docs/RULINGS.md 137); else the bots at the top that are not told apart (those sharing
    first place, and each one below not separated from the one above it)."""
    rows = [r for r in doc["overall"]["standings"] if r["games"]]
    top = rows[:1]
    while len(top) < len(rows) and (top[-1].get("next") == "not separated" or rows[len(top)]["rank"] == 1):
        top.append(rows[len(top)])
    champion = doc.get("champion")
    return {
        "champion": champion,
        "house": champion in house,
        "level": doc.get("confidence", 0.95),
        "open": [] if champion else [r["bot"] for r in top],
        "shared": not champion and len(top) > 1 and all(r["rank"] == 1 for r in top),
    }


def index_page(doc: dict[str, Any], stats: Sequence[BotStats], context: dict[str, Any]) -> str:
    """``index.html``: overall standings, the separation verdicts, then standings per table size."""
    index = {s.bot.label: s.bot.bot for s in stats}
    results: ResultSet = context["results"]
    house = context.get("house", frozenset())
    scopes = [_scope("Standings: all games", doc["overall"], index, "all", True, house)]
    for size, scope in doc["by_size"].items():
        title = f"Standings at {size}-player tables"
        if len(doc["by_size"]) == 1:
            title += " (all games)"
        scopes.append(_scope(title, scope, index, size, len(doc["by_size"]) > 1, house))
    sep = doc.get("separation") or {}
    for scope in scopes:
        for r in scope["rows"]:
            r["level"] = doc.get("confidence", 0.95)
    return render(
        "report_index.html.j2",
        title=context.get("title", TITLE),
        announce=champion_line(doc, house) if "champion" in doc else None,
        up="",
        facts=header(results, len(stats)),
        db=context["db"],
        created=context["created"],
        version=context["arena_version"],
        scopes=scopes,
        separation=sep,
        anytime=bool(sep.get("pairs")) and "p_value" in sep["pairs"][0],
        note=GAUNTLET_NOTE if doc.get("rank_rule") == "gauntlet" else RANK_NOTE,
    )


def games_page(
    stored: Sequence[GameResult], labels: Sequence[str], found: set[Any], notes: dict[Any, str], context: dict[str, Any]
) -> str:
    """``games.html``: every stored game, linked to the viewer."""
    games = [
        {
            "key": str(g.key),
            "href": viewer_link(g.key) if g.key in found else None,
            "seats": [
                {"bot": labels[b], "place": p, "score": score}
                for b, p, score in zip(g.seating, g.places, g.scores, strict=True)
            ],
            "rounds": g.rounds,
            "moves": g.moves,
            "note": notes.get(g.key),
        }
        for g in stored
    ]
    return render("report_games.html.j2", title=f"{context.get('title', TITLE)}: games", up="", games=games)


def _game(key: Any, found: set[Any]) -> dict[str, Any]:
    return {"key": str(key), "href": viewer_link(key, "../", "end") if key in found else None}


def bot_page(s: BotStats, doc: dict[str, Any], labels: Sequence[str], found: set[Any], context: dict[str, Any]) -> str:
    """``bots/bot-N.html``: who, how it placed by seat and size, its faults, time, best and worst games."""
    b = s.bot
    moves, seconds, worst = real(s.moves), real(s.seconds), real(s.worst)
    time = None
    if s.timed and moves and seconds is not None and worst is not None:
        time = {"mean_ms": 1000 * seconds / moves, "moves": s.moves, "worst_ms": 1000 * worst}

    by_seat: dict[tuple[Any, Any], list[Any]] = {}
    by_size: dict[Any, list[Any]] = {}
    for g in s.games:
        size = getattr(g["key"], "size", None)
        by_seat.setdefault((size, g["seat"]), []).append(g["place"])
        by_size.setdefault(size, []).append(g["place"])
    sizes = []
    for size, places in sorted(by_size.items(), key=lambda kv: _order(kv[0])):
        shown = range(1, size + 1) if isinstance(size, int) and 0 < size <= MAX_SIZE else range(0)
        counts = [places.count(p) for p in shown]
        sizes.append({"size": size, "games": len(places), "avg": _mean(places), "counts": counts})
    seats = [
        {"size": size, "seat": seat, "games": len(places), "avg": _mean(places), "firsts": places.count(1)}
        for (size, seat), places in sorted(by_seat.items(), key=lambda kv: _order(kv[0]))
    ]

    kinds: dict[str, int] = {}
    for f in s.faults:
        kinds[str(f["kind"])] = kinds.get(str(f["kind"]), 0) + 1
    faults = {
        "count": len(s.faults),
        "kinds": sorted(kinds.items()),
        "shown": [dict(f, game=_game(f["key"], found)) for f in s.faults[:200]],
        "more": max(0, len(s.faults) - 200),
    }

    def norm(g: dict[str, Any]) -> float:
        k, place = real(getattr(g["key"], "size", None)), real(g["place"])
        return (k - place) / (k - 1) if k is not None and place is not None and k > 1 else 0.0

    ranked = sorted(s.games, key=lambda g: (-norm(g), real(g["score"]) or 0.0, _order(g["key"])))
    tops = [
        {
            "title": title,
            "games": [dict(g, game=_game(g["key"], found), size=getattr(g["key"], "size", "?")) for g in chosen],
        }
        for title, chosen in (("Best games", ranked[:5]), ("Worst games", list(reversed(ranked))[:5]))
    ]
    return render(
        "report_bot.html.j2",
        title=f"{context.get('title', TITLE)}: {b.label}",
        up="../",
        label=b.label,
        author=HOUSE if b.label in context.get("house", ()) else s.author,
        name=b.name,
        path=file_name(b.path),
        sha256=b.sha256,
        overall=next((r for r in doc["overall"]["standings"] if r["bot"] == b.label), None),
        time=time,
        by_size=sizes,
        by_seat=seats,
        faults=faults,
        tops=tops,
    )
