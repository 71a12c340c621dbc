"""Standings from finished games: placement score with a confidence interval, an
OpenSkill rating, and head-to-head, per table size and overall.

Everything is computed from the games in key order, never in the order they
finished, so the same games always give the same standings.

* **score**: the normalised placement ``(K - place) / (K - 1)`` (1 first, 0
  last), averaged per *duplicate block* (the ``K`` seatings of one deal),
  then over blocks; the 95% interval is a percentile bootstrap over the block
  means (independent where single games are not), so it stays inside [0, 1]
  however few blocks there are (:func:`.stats.bootstrap_interval`). The
  standings are ranked by this score.
* **rating**: OpenSkill Plackett-Luce ``mu``, ``sigma`` and ``ordinal``
  (``mu - 3 sigma``), updated one game at a time in key order.
* **head-to-head**: among the games two bots shared, the share in which the
  first placed above the second (equal places count half).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...trust.text import render_table, safe_line, to_csv
from .finished import GameResult
from .stats import bootstrap_interval

# two-sided 95% quantiles of Student's t for 1..30 degrees of freedom
_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (table, then
    the Cornish-Fisher series, which is within 1e-4 beyond 30)."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_ci(values: Sequence[float]) -> tuple[float | None, float | None]:
    """(mean, half-width of the 95% t-interval); the half-width is None below 2 values."""
    n = len(values)
    if n == 0:
        return None, None
    mean = math.fsum(values) / n
    if n < 2:
        return mean, None
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, t975(n - 1) * math.sqrt(var / n)


@dataclass
class _Tally:
    games: int = 0
    wins: int = 0
    losses: int = 0
    place_sum: int = 0
    faults: int = 0
    retired: int = 0
    blocks: dict[tuple[int, int, int], list[float]] = field(default_factory=dict)


def compute(labels: Sequence[str], games: Sequence[GameResult], kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """Standings of one scope (the games given) as plain data; ``kinds`` says per bot
    whether it is ``built-in`` or a ``file`` (a column of its own in the tables)."""
    from openskill.models import PlackettLuce

    n = len(labels)
    tallies = [_Tally() for _ in range(n)]
    model = PlackettLuce()
    ratings = [model.rating(name=label) for label in labels]
    above = [[0.0] * n for _ in range(n)]
    shared = [[0] * n for _ in range(n)]
    blocks: set[tuple[int, int, int]] = set()
    for g in sorted(games, key=lambda g: g.key):
        k = len(g.seats)
        block = (g.key.size, g.key.table, g.key.deal)
        blocks.add(block)
        for bot, place, _score, loser, faults, retired in g.seats:
            t = tallies[bot]
            t.games += 1
            t.wins += place == 1
            t.losses += loser
            t.place_sum += place
            t.faults += faults
            t.retired += retired
            t.blocks.setdefault(block, []).append((k - place) / (k - 1))
        for i, (a, pa, *_) in enumerate(g.seats):
            for b, pb, *_ in g.seats[i + 1 :]:
                shared[a][b] += 1
                shared[b][a] += 1
                if pa == pb:
                    above[a][b] += 0.5
                    above[b][a] += 0.5
                elif pa < pb:
                    above[a][b] += 1
                else:
                    above[b][a] += 1
        rated = model.rate([[ratings[bot]] for bot, *_ in g.seats], ranks=[place for _, place, *_ in g.seats])
        for (bot, *_), team in zip(g.seats, rated, strict=True):
            ratings[bot] = team[0]
    rows: list[dict[str, Any]] = []
    for i, t in enumerate(tallies):
        block_means = [math.fsum(v) / len(v) for _, v in sorted(t.blocks.items())]
        score, _ = mean_ci(block_means)
        ci = bootstrap_interval(block_means)
        half = None if ci is None or score is None else max(score - ci[0], ci[1] - score)
        r = ratings[i]
        rows.append(
            {
                "rank": 0,
                "bot": labels[i],
                "kind": kinds[i] if kinds else "",
                "games": t.games,
                "wins": t.wins,
                "losses": t.losses,
                "avg_place": _r(t.place_sum / t.games) if t.games else None,
                "score": _r(score),
                "score_ci": _r(half),
                "score_lo": _r(ci[0]) if ci else None,
                "score_hi": _r(ci[1]) if ci else None,
                "blocks": len(t.blocks),
                "mu": _r(r.mu),
                "sigma": _r(r.sigma),
                "ordinal": _r(r.ordinal()),
                "faults": t.faults,
                "retired": t.retired,
            }
        )
    rows.sort(key=lambda row: (row["games"] == 0, -(row["score"] or 0.0), -row["ordinal"], row["bot"]))
    for i, row in enumerate(rows):  # equal scores share a rank (1, 1, 3): the rating does not rank
        before = rows[i - 1] if i else None
        tied = before is not None and row["games"] and before["games"] and row["score"] == before["score"]
        row["rank"] = before["rank"] if tied and before is not None else i + 1
    h2h = {
        labels[a]: {
            labels[b]: {"above": _r(above[a][b] / shared[a][b]), "games": shared[a][b]}
            for b in range(n)
            if b != a and shared[a][b]
        }
        for a in range(n)
    }
    return {"games": len(games), "blocks": len(blocks), "standings": rows, "head_to_head": h2h}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def standings_doc(
    labels: Sequence[str],
    games: Sequence[GameResult],
    kinds: Sequence[str] | None = None,
    authors: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Overall standings and standings per table size; with ``authors`` (label -> author, from
    submission manifests) each row also names its bot's ``author`` (None when unknown)."""
    sizes = sorted({g.key.size for g in games})
    overall = compute(labels, games, kinds)
    if len(sizes) == 1:  # the same games: the same standings
        doc = {"overall": overall, "by_size": {str(sizes[0]): overall}}
    else:
        doc = {
            "overall": overall,
            "by_size": {str(k): compute(labels, [g for g in games if g.key.size == k], kinds) for k in sizes},
        }
    if authors:
        for scope in [overall, *doc["by_size"].values()]:
            for row in scope["standings"]:
                row["author"] = authors.get(row["bot"])
    return doc


def kind_of(origin: str) -> str:
    """How tables name a bot's origin: ``built-in`` (registered) or ``file``."""
    return "built-in" if origin == "registry" else "file"


# -- printing -------------------------------------------------------------------

COLUMNS = (
    "rank",
    "bot",
    "kind",
    "games",
    "wins",
    "losses",
    "avg place",
    "score",
    "95% interval",
    "rating mu",
    "sigma",
    "ordinal",
    "faults",
)

#: A teams tournament's first columns (instead of rank, bot, kind): a team and its members.
TEAM_COLUMNS = ("rank", "team", "members")

#: Printed under each standings table: which column ranks, and why the rating may disagree.
RANK_NOTE = (
    "Ranked by score (mean normalised placement over duplicate blocks, 1 = always first; equal "
    "scores share a rank); the 95% interval is a bootstrap over blocks. The rating (OpenSkill, "
    "updated game by game) weighs whom each game was against and may order close bots "
    "differently; it does not rank."
)

#: Printed under a gauntlet's standings instead of the usual rank note.
GAUNTLET_NOTE = (
    "A gauntlet: the field is ranked by score; the new bot's place is one plus the number of field "
    "bots it did not beat on the deals they shared (the paired verdict, or the sign of the paired "
    "difference while not separated): the field's scores come from different opponents."
)


def standings_rows(scope: dict[str, Any]) -> list[list[Any]]:
    """One scope's standings as table cells (the columns of :data:`COLUMNS`)."""
    rows = []
    by = any(r.get("author") for r in scope["standings"])  # an author column only when a manifest named one
    for r in scope["standings"]:
        interval = "-" if r.get("score_lo") is None else f"{r['score_lo']:.3f}-{r['score_hi']:.3f}"
        rows.append(
            [
                r["rank"],
                r["bot"],
                " + ".join(r["members"]) if "members" in r else r.get("kind", ""),
                *([r.get("author") or "-"] if by else []),
                r["games"],
                r["wins"],
                r["losses"],
                _f(r["avg_place"], 2),
                _f(r["score"], 3),
                interval,
                _f(r["mu"], 2),
                _f(r["sigma"], 2),
                _f(r["ordinal"], 2),
                str(r["faults"]) + (f" ({r['retired']} retired)" if r["retired"] else ""),
            ]
        )
    return rows


#: The terminal table's columns (of :data:`COLUMNS`, some renamed): losses, rating mu and sigma
#: are left to markdown, csv and json, which have them all.
TERMINAL_COLUMNS = {
    "rank": "rank",
    "bot": "bot",
    "kind": "kind",
    "team": "team",
    "members": "members",
    "author": "author",
    "games": "games",
    "wins": "wins",
    "avg place": "place",
    "score": "score",
    "95% interval": "95% CI",
    "ordinal": "rating",
    "faults": "faults",
}
#: The widest a terminal standings table is drawn when its names allow it: columns are left out
#: in this order until it fits. No name or author is ever shortened (who ranks where, whole).
TERMINAL_WIDTH = 100
DROPPED_FIRST = ("kind", "wins", "place", "rating")


def format_scope(scope: dict[str, Any], title: str, fmt: str = "table") -> str:
    """One scope's standings table (``fmt`` ``table`` or ``markdown``), with a title line.
    For a terminal (``table``), the columns of :data:`TERMINAL_COLUMNS`, fitted to
    :data:`TERMINAL_WIDTH` when the names allow."""
    head = f"{title}: {safe_line(scope['games'], fmt)} games in {safe_line(scope['blocks'], fmt)} duplicate deals"
    by = any(r.get("author") for r in scope["standings"])
    first = TEAM_COLUMNS if any("members" in r for r in scope["standings"]) else COLUMNS[:3]
    headers = first + (("author",) if by else ()) + COLUMNS[3:]
    align = ("right", "left", "left") + ("left",) * by + ("right",) * (len(COLUMNS) - 3)
    rows = standings_rows(scope)
    if fmt != "table":
        return head + "\n" + render_table(rows, headers, fmt, colalign=align)
    columns = [
        (TERMINAL_COLUMNS[h], a, i)
        for i, (h, a) in enumerate(zip(headers, align, strict=True))
        if h in TERMINAL_COLUMNS
    ]
    cells = [{name: row[i] for name, _, i in columns} for row in rows]

    def draw(names: list[str]) -> str:
        spec = [(n, a) for n, a, _ in columns if n in names]
        return render_table(
            [[c[n] for n, _ in spec] for c in cells], [n for n, _ in spec], fmt, colalign=[a for _, a in spec]
        )

    def width(text: str) -> int:
        return max(len(line) for line in text.splitlines())

    names = [n for n, _, _ in columns]
    table = draw(names)
    for dropped in DROPPED_FIRST:
        if width(table) <= TERMINAL_WIDTH:
            break
        if dropped not in names:
            continue
        names.remove(dropped)
        table = draw(names)
    return head + "\n" + table


def format_h2h(scope: dict[str, Any], title: str, fmt: str = "table") -> str:
    """The head-to-head matrix in standings order: row bot above column bot."""
    order = [r["bot"] for r in scope["standings"]]
    short = [f"{i + 1}" for i in range(len(order))]
    rows = []
    for i, a in enumerate(order):
        cells = []
        for b in order:
            cell = scope["head_to_head"].get(a, {}).get(b)
            cells.append("" if a == b else "-" if cell is None else f"{cell['above']:.2f}")
        rows.append([f"{i + 1} {a}", *cells])
    head = (
        f"{title} head-to-head: share of shared games in which the row bot placed above the "
        f"column bot (equal places count half)"
    )
    return (
        head
        + "\n"
        + render_table(
            rows,
            ["", *short],
            fmt,
            colalign=("left",) + ("right",) * len(order),
        )
    )


def format_standings(doc: dict[str, Any], *, h2h: bool | None = None, fmt: str = "table") -> str:
    """Overall standings, per-size standings when there are several sizes, and
    head-to-head (by default only up to 16 bots). ``fmt``: ``table`` for a terminal,
    ``markdown``; every cell made safe by :func:`~arena.trust.text.render_table`."""
    from .separation import format_separation

    md = fmt == "markdown"
    title = (lambda t: f"## {t}") if md else (lambda t: t)
    note = GAUNTLET_NOTE if doc.get("rank_rule") == "gauntlet" else RANK_NOTE
    parts = [format_scope(doc["overall"], title("Overall"), fmt) + "\n" + ("\n" if md else "") + note]
    if doc.get("separation"):
        parts.append(format_separation(doc["separation"], fmt))
    bots = len(doc["overall"]["standings"])
    show_h2h = bots <= 16 if h2h is None else h2h
    if show_h2h:
        parts.append(format_h2h(doc["overall"], title("Overall"), fmt))
    if len(doc["by_size"]) > 1:
        for size, scope in doc["by_size"].items():
            parts.append(format_scope(scope, title(f"{safe_line(size, fmt)} players"), fmt))
            if show_h2h:
                parts.append(format_h2h(scope, title(f"{safe_line(size, fmt)} players"), fmt))
    if h2h is None and not show_h2h:
        parts.append(f"(head-to-head of {bots} bots left out; --h2h prints it, --json has it)")
    return "\n\n".join(parts)


def _f(x: float | None, digits: int) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


CSV_FIELDS = (
    "scope",
    "rank",
    "bot",
    "kind",
    "author",
    "games",
    "wins",
    "losses",
    "avg_place",
    "score",
    "score_lo",
    "score_hi",
    "blocks",
    "mu",
    "sigma",
    "ordinal",
    "faults",
    "retired",
)


def standings_csv(doc: dict[str, Any]) -> str:
    """Every scope's standings as CSV, one row per bot and scope (``overall`` or a table
    size); cells made safe by :func:`~arena.trust.text.to_csv` (no formula, numbers as numbers)."""
    scopes = [("overall", doc["overall"])]
    if len(doc["by_size"]) > 1:
        scopes += list(doc["by_size"].items())
    fields: tuple[str, ...] = CSV_FIELDS
    teams = any("members" in r for _, scope in scopes for r in scope["standings"])
    if teams:  # a team and its members where a bot and its kind go
        fields = tuple({"bot": "team", "kind": "members"}.get(f, f) for f in CSV_FIELDS)
    rows = [
        [
            {
                **r,
                "author": r.get("author") or "",
                "scope": name,
                **({"team": r["bot"], "members": " + ".join(r["members"])} if teams else {}),
            }.get(f)
            for f in fields
        ]
        for name, scope in scopes
        for r in scope["standings"]
    ]
    return to_csv(fields, rows)
