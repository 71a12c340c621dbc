"""The report's HTML pages: standings, the game list, one page per bot.

Every text from the database (labels, names, fault details, authors) is
escaped with :func:`html.escape`; rows carry ``data-bot`` and ``data-rank``
for tests and users' scripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .charts import heat_map, interval_chart
from .view import GENERATOR

if TYPE_CHECKING:
    from ..tournament.replay import StoredGame
    from .report import BotStats

CSS = """
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  color: #1d2230; background: #eef1f5; }
body { margin: 0; } main { max-width: 1100px; margin: 0 auto; padding: 16px; }
header.bar { background: #1d2230; color: #fff; padding: 10px 16px; display: flex; gap: 18px;
  align-items: baseline; flex-wrap: wrap; }
header.bar h1 { margin: 0; font-size: 18px; } header.bar a { color: #fff; }
section { background: #fff; border-radius: 10px; box-shadow: 0 1px 4px rgba(0,0,0,.12); padding: 12px 16px;
  margin: 0 0 16px; overflow-x: auto; }
h2 { font-size: 17px; margin: 4px 0 10px; } h3 { font-size: 15px; margin: 14px 0 6px; }
p.meta { color: #5c6577; margin: 4px 0 12px; }
table.data { border-collapse: collapse; width: 100%; font-size: 14px; font-variant-numeric: tabular-nums; }
table.data th, table.data td { padding: 4px 8px; border-bottom: 1px solid #e3e6ec; text-align: right;
  white-space: nowrap; }
table.data th { background: #f5f6f9; font-weight: 600; }
table.data td.text, table.data th.text { text-align: left; white-space: normal; overflow-wrap: anywhere; }
table.data tr:hover td { background: #fafbfd; }
.chart { display: block; margin: 4px 0; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: flex-start; }
figure.chart-box { margin: 14px 0 0; flex: 1 1 420px; min-width: 0; max-width: 640px; }
figure.chart-box figcaption { font-weight: 600; font-size: 13px; margin-bottom: 2px; }
.chart .chart-title { font-weight: 600; font-size: 13px; fill: #1d2230; }
.chart .label { fill: #1d2230; font-size: 12px; } .chart .tick { fill: #5c6577; font-size: 11px; }
.chart .grid { stroke: #e3e6ec; } .chart .ci { stroke: #1f6f4a; stroke-width: 2; }
.chart .dot { fill: #1f6f4a; } .chart .diag { fill: #d9dde5; } .chart .none { fill: #f5f6f9; }
.chart .cell { stroke: #fff; } .chart .cell-text { fill: #1d2230; font-size: 11px; }
.note { color: #8a5a00; } .detail { font-family: ui-monospace, monospace; font-size: 12px; }
a { color: #1b57b5; }
@media (max-width: 700px) { main { padding: 8px; } section { padding: 8px; } table.data { font-size: 12px; } }
"""


def page(title: str, body: str, *, depth: int = 0) -> str:
    """A whole page; ``depth`` is how far below the report's top folder it lives."""
    up = "../" * depth
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{GENERATOR}'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f'<header class="bar"><h1>{escape(title)}</h1><a href="{up}index.html">Standings</a>'
        f'<a href="{up}games.html">Games</a><a href="{up}viewer.html">Viewer</a></header>'
        f"<main>{body}</main></body></html>\n"
    )


def _f(x: float | None, digits: int) -> str:
    return "\u2013" if x is None else f"{x:.{digits}f}"


def viewer_link(key: Any, up: str = "", step: str = "0") -> str:
    return f"{up}viewer.html#game={quote(str(key))}&amp;step={step}"


def standings_table(scope: dict[str, Any], index: dict[str, int], *, size: str = "all") -> str:
    """The standings of one scope, in the order and with the numbers of ``arena standings``."""
    head = (
        "rank",
        "bot",
        "games",
        "wins",
        "losses",
        "avg place",
        "score",
        "\u00b195%",
        "rating \u03bc",
        "\u03c3",
        "ordinal",
        "faults",
    )
    out = [f'<table class="data standings" data-size="{escape(size)}"><thead><tr>']
    out += [f'<th class="{"text" if h == "bot" else ""}">{escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for r in scope["standings"]:
        label = r["bot"]
        faults = str(r["faults"]) + (f" ({r['retired']} retired)" if r["retired"] else "")
        out.append(
            f'<tr data-bot="{escape(label)}" data-rank="{r["rank"]}"><td>{r["rank"]}</td>'
            f'<td class="text"><a href="bots/bot-{index[label]}.html">{escape(label)}</a></td>'
            f"<td>{r['games']}</td><td>{r['wins']}</td><td>{r['losses']}</td><td>{_f(r['avg_place'], 2)}</td>"
            f"<td>{_f(r['score'], 3)}</td><td>{_f(r['score_ci'], 3)}</td><td>{_f(r['mu'], 2)}</td>"
            f"<td>{_f(r['sigma'], 2)}</td><td>{_f(r['ordinal'], 2)}</td><td>{escape(faults)}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def scope_section(title: str, scope: dict[str, Any], index: dict[str, int], size: str, *, charts: bool = True) -> str:
    """Standings, score and rating charts and the head-to-head heat map of one scope."""
    rows = scope["standings"]
    head = (
        f'<section class="scope" data-size="{escape(size)}"><h2>{escape(title)}</h2>'
        f'<p class="meta">{scope["games"]} games in {scope["blocks"]} duplicate deals</p>'
        f"{standings_table(scope, index, size=size)}"
    )
    if not charts:
        return head + '<p class="meta">The same games as the standings above, so the same charts.</p></section>'

    order = [r["bot"] for r in rows]
    score = interval_chart(
        [(r["bot"], r["score"], r["score_ci"]) for r in rows],
        lo=0,
        hi=1,
        ticks=(0, 0.25, 0.5, 0.75, 1),
        title="Score (1 = always first, 0 = always last) with its 95% interval",
    )
    mus = [r["mu"] for r in rows if r["mu"] is not None]
    sig = [r["sigma"] for r in rows if r["sigma"] is not None]
    lo = min(m - 3 * s for m, s in zip(mus, sig, strict=False)) if mus else 0
    hi = max(m + 3 * s for m, s in zip(mus, sig, strict=False)) if mus else 1
    step = max(1, round((hi - lo) / 5))
    ticks = [t for t in range(int(lo) - int(lo) % step, int(hi) + step, step) if lo <= t <= hi]
    rating = interval_chart(
        [(r["bot"], r["mu"], 3 * r["sigma"]) for r in rows],
        lo=lo,
        hi=hi,
        ticks=ticks,
        title="Rating \u03bc \u00b1 3\u03c3 (OpenSkill; the left end is the ordinal)",
    )
    cells = {}
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            cell = scope["head_to_head"].get(a, {}).get(b)
            if cell is not None and cell["above"] is not None:
                cells[(i, j)] = (cell["above"], cell["games"])
    heat = heat_map(order, cells, title="Head-to-head: share of shared games the row bot placed above the column bot")
    return f'{head}<div class="charts">{score}{rating}</div>{heat}</section>'


def index_page(doc: dict[str, Any], stats: Sequence[BotStats], context: dict[str, Any]) -> str:
    """``index.html``: overall standings, then standings per table size."""
    index = {s.bot.label: s.bot.bot for s in stats}
    settings = context["settings"]
    rules = settings.get("rules", {}).get("name", "contest")
    sizes = ", ".join(str(k) for k in settings.get("sizes", []))
    partial = "" if context["played"] >= context["total"] else " (not finished)"
    meta = (
        f'<p class="meta">{len(stats)} bots; {context["played"]} of {context["total"]} games played{partial}; '
        f"tables of {escape(sizes)} players; {settings.get('games', '?')} deals per table, each played once per "
        f"seat rotation; rules {escape(str(rules))}. Database {escape(context['db'])}, started "
        f"{escape(context['created'])}, arena {escape(context['arena_version'])}.</p>"
    )
    body = [meta, scope_section("Standings: all games", doc["overall"], index, "all")]
    for size, scope in doc["by_size"].items():
        title = f"Standings at {size}-player tables"
        if len(doc["by_size"]) == 1:
            title += " (all games)"
        body.append(scope_section(title, scope, index, size, charts=len(doc["by_size"]) > 1))
    return page("Yard bridge tournament", "".join(body))


def games_page(
    stored: Sequence[StoredGame], labels: Sequence[str], found: set[Any], notes: dict[Any, str], context: dict[str, Any]
) -> str:
    """``games.html``: every stored game, linked to the viewer."""
    out = [
        '<section><h2>Every game</h2><p class="meta">Seats in order: bot (place, score). Open a game to watch '
        "it; the viewer\u2019s link names the moment (#game=KEY&amp;step=N).</p>"
        '<table class="data games"><thead><tr><th class="text">game</th><th class="text">seats</th>'
        '<th>rounds</th><th>moves</th><th class="text">note</th>'
        "</tr></thead><tbody>"
    ]
    for g in stored:
        seats = ", ".join(
            f"{escape(labels[b])} ({p}, {s})" for b, p, s in zip(g.seating, g.places, g.scores, strict=True)
        )
        key = escape(str(g.key))
        cell = f'<a href="{viewer_link(g.key)}">{key}</a>' if g.key in found else f"{key} (no record)"
        note = f'<span class="note">{escape(notes[g.key])}</span>' if g.key in notes else ""
        out.append(
            f'<tr data-game="{key}"><td class="text">{cell}</td><td class="text">{seats}</td>'
            f'<td>{g.rounds}</td><td>{g.moves}</td><td class="text">{note}</td></tr>'
        )
    out.append("</tbody></table></section>")
    return page("Yard bridge tournament: games", "".join(out))


def _game_cell(key: Any, found: set[Any]) -> str:
    return f'<a href="{viewer_link(key, "../", "end")}">{escape(str(key))}</a>' if key in found else escape(str(key))


def bot_page(s: BotStats, doc: dict[str, Any], labels: Sequence[str], found: set[Any], context: dict[str, Any]) -> str:
    """``bots/bot-N.html``: who, how it placed by seat and size, its faults, time, best and worst games."""
    b = s.bot
    row = next((r for r in doc["overall"]["standings"] if r["bot"] == b.label), None)
    where = escape(b.path) if b.path else "built in (registered bot)"
    author = escape(s.author) if s.author else "\u2013"
    out = [
        f'<section><h2>{escape(b.label)}</h2><table class="data"><tbody>'
        f'<tr><th class="text">author</th><td class="text">{author}</td></tr>'
        f'<tr><th class="text">Bot.name</th><td class="text">{escape(b.name)}</td></tr>'
        f'<tr><th class="text">source</th><td class="text">{where}</td></tr>'
        f'<tr><th class="text">sha256</th><td class="text detail">{escape(b.sha256)}</td></tr>'
    ]
    if row:
        out.append(
            f'<tr><th class="text">overall</th><td class="text" data-rank="{row["rank"]}">rank {row["rank"]}, '
            f"score {_f(row['score'], 3)} \u00b1 {_f(row['score_ci'], 3)}, {row['games']} games, "
            f"{row['wins']} wins, average place {_f(row['avg_place'], 2)}</td></tr>"
        )
    if s.timed and s.moves:
        out.append(
            f'<tr><th class="text">time per move</th><td class="text">{1000 * s.seconds / s.moves:.2f} ms on '
            f"average over {s.moves} moves; worst {1000 * s.worst:.1f} ms</td></tr>"
        )
    else:
        out.append('<tr><th class="text">time per move</th><td class="text">not stored in this database</td></tr>')
    out.append("</tbody></table></section>")

    by_seat: dict[tuple[int, int], list[int]] = {}
    by_size: dict[int, list[int]] = {}
    for g in s.games:
        by_seat.setdefault((g["key"].size, g["seat"]), []).append(g["place"])
        by_size.setdefault(g["key"].size, []).append(g["place"])
    out.append(
        '<section><h2>Places by table size</h2><table class="data"><thead><tr><th>players</th><th>games</th>'
        '<th>avg place</th><th class="text">places (1st, 2nd, ...)</th></tr></thead><tbody>'
    )
    for size, places in sorted(by_size.items()):
        counts = " / ".join(str(places.count(p)) for p in range(1, size + 1))
        out.append(
            f"<tr><td>{size}</td><td>{len(places)}</td><td>{sum(places) / len(places):.2f}</td>"
            f'<td class="text">{counts}</td></tr>'
        )
    out.append(
        '</tbody></table><h3>Places by seat</h3><table class="data"><thead><tr><th>players</th><th>seat</th>'
        "<th>games</th><th>avg place</th><th>firsts</th></tr></thead><tbody>"
    )
    for (size, seat), places in sorted(by_seat.items()):
        out.append(
            f"<tr><td>{size}</td><td>{seat}</td><td>{len(places)}</td>"
            f"<td>{sum(places) / len(places):.2f}</td><td>{places.count(1)}</td></tr>"
        )
    out.append("</tbody></table></section>")

    kinds: dict[str, int] = {}
    for f in s.faults:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    out.append(f"<section><h2>Faults ({len(s.faults)})</h2>")
    if s.faults:
        out.append('<table class="data"><thead><tr><th class="text">kind</th><th>count</th></tr></thead><tbody>')
        out += [f'<tr><td class="text">{escape(k)}</td><td>{n}</td></tr>' for k, n in sorted(kinds.items())]
        out.append(
            '</tbody></table><h3>Details</h3><table class="data"><thead><tr><th class="text">game</th>'
            '<th>round</th><th class="text">kind</th><th class="text">detail</th></tr></thead><tbody>'
        )
        for f in s.faults[:200]:
            out.append(
                f'<tr><td class="text">{_game_cell(f["key"], found)}</td><td>{f["round"]}</td>'
                f'<td class="text">{escape(f["kind"])}</td>'
                f'<td class="text detail">{escape(f["detail"])}</td></tr>'
            )
        out.append("</tbody></table>")
        if len(s.faults) > 200:
            out.append(f'<p class="meta">and {len(s.faults) - 200} more</p>')
    else:
        out.append('<p class="meta">none</p>')
    out.append("</section>")

    def norm(g: dict[str, Any]) -> float:
        k: int = g["key"].size
        place: int = g["place"]
        return (k - place) / (k - 1)

    ranked = sorted(s.games, key=lambda g: (-norm(g), g["score"], g["key"]))
    for title, chosen in (("Best games", ranked[:5]), ("Worst games", list(reversed(ranked))[:5])):
        out.append(
            f'<section><h2>{title}</h2><table class="data"><thead><tr><th class="text">game</th><th>seat</th>'
            "<th>place</th><th>score</th></tr></thead><tbody>"
        )
        for g in chosen:
            out.append(
                f'<tr><td class="text">{_game_cell(g["key"], found)}</td><td>{g["seat"]}</td>'
                f"<td>{g['place']} of {g['key'].size}</td><td>{g['score']}</td></tr>"
            )
        out.append("</tbody></table></section>")
    return page(f"Yard bridge tournament: {b.label}", "".join(out), depth=1)
