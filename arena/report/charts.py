"""Charts for the report as plain inline SVG (no library, no script, works offline).

The markup is the templates ``chart_interval.svg.j2`` and ``chart_heat.svg.j2``
(escaping engine, :mod:`arena.web.render`). Every label reaches them as text;
every coordinate, size and colour is computed here from real numbers
(:func:`~arena.web.render.real`): a value that is not a finite number is drawn
as missing, never written into the markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from ..web.render import fragment, real


def _x(value: float, lo: float, hi: float, left: float, width: float) -> float:
    return left + (value - lo) / (hi - lo) * width if hi > lo else left


def _short(label: str) -> str:
    return label if len(label) <= 22 else label[:21] + "\u2026"


def interval_chart(
    rows: Sequence[tuple[Any, Any, Any]],
    *,
    lo: float,
    hi: float,
    title: str,
    ticks: Sequence[float],
    width: int = 640,
) -> Markup:
    """One row per label: a dot at the value and a bar over its interval (value, half-width).

    Rows without a value are drawn as "no games"; a missing half-width draws the dot alone.
    """
    low, high = real(lo), real(hi)
    low, high = (0.0, 1.0) if low is None or high is None else (low, high)
    row_h, left, right, top = 26, 170, 20, 10
    plot_w = width - left - right
    height = top + row_h * len(rows) + 26
    marks = [
        {"x": _x(t, low, high, left, plot_w), "value": t, "y1": top - 4, "y2": height - 22, "ty": height - 6}
        for t in (real(t) for t in ticks)
        if t is not None
    ]
    drawn = []
    for i, (label, value, half) in enumerate(rows):
        text, v, h = str(label), real(value), real(half)
        row: dict[str, Any] = {"y": top + row_h * i + row_h / 2, "lx": left - 10, "nx": left + 4, "x": None, "a": None}
        row.update(label=text, short=_short(text))
        if v is not None:
            row["x"] = _x(min(high, max(low, v)), low, high, left, plot_w)
            row["tip"] = f"{text}: {v:.3f}" + (f" \u00b1 {h:.3f}" if h is not None else "")
            if h is not None:
                row["a"] = _x(max(low, v - h), low, high, left, plot_w)
                row["b"] = _x(min(high, v + h), low, high, left, plot_w)
        drawn.append(row)
    return fragment("chart_interval.svg.j2", title=title, width=width, height=height, ticks=marks, rows=drawn)


def heat_colour(share: float) -> str:
    """0 (always below) red, 0.5 white, 1 (always above) green."""
    share = min(1.0, max(0.0, share))
    if share < 0.5:
        t = share / 0.5
        r, g, b = 214 + (255 - 214) * t, 69 + (255 - 69) * t, 65 + (255 - 65) * t
    else:
        t = (share - 0.5) / 0.5
        r, g, b = 255 - (255 - 46) * t, 255 - (255 - 160) * t, 255 - (255 - 90) * t
    return f"#{int(r):02x}{int(g):02x}{int(b):02x}"


def heat_map(labels: Sequence[Any], cells: dict[tuple[int, int], tuple[Any, Any]], *, title: str) -> Markup:
    """The head-to-head matrix: cell (row, column) is the share of shared games in which the
    row bot placed above the column bot, coloured from red (0) through white to green (1)."""
    names = [str(label) for label in labels]
    n = len(names)
    size = 44 if n <= 12 else 30 if n <= 24 else 18
    left, top = 190, 22
    width, height = left + size * n + 10, top + size * n + 10
    columns = [{"x": left + size * j + size / 2, "y": top - 8, "number": j + 1, "label": names[j]} for j in range(n)]
    rows = []
    for i, name in enumerate(names):
        y = top + size * i
        row: dict[str, Any] = {"y": y, "ty": y + size / 2 + 4, "cy": y + size / 2 + 4, "lx": left - 8}
        row.update(number=i + 1, short=_short(name), label=name, cells=[])
        for j in range(n):
            x = left + size * j
            found = cells.get((i, j))
            share = real(found[0]) if found is not None else None
            if i == j or share is None:
                row["cells"].append({"x": x, "kind": "diag" if i == j else "none"})
                continue
            games = real(found[1]) if found is not None else None
            shared = f"{games:.0f}" if games is not None else "?"
            row["cells"].append(
                {
                    "x": x,
                    "kind": "cell",
                    "colour": heat_colour(share),
                    "tip": f"{name} above {names[j]} in {share:.0%} of {shared} shared games",
                    "tx": x + size / 2,
                    "text": share if size >= 30 else None,
                }
            )
        rows.append(row)
    return fragment("chart_heat.svg.j2", title=title, width=width, height=height, size=size, columns=columns, rows=rows)


#: The least span of a rating chart's y axis, in rating points: a version whose rating moved by two
#: points is drawn as the small change it is, never stretched over the whole height.
MIN_RATING_SPAN = 10.0


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round values (steps of 1, 2, 2.5 or 5 times a power of ten) from ``lo`` to ``hi``."""
    span = hi - lo
    if not (span > 0 and math.isfinite(span)):
        return [lo]
    magnitude = 10 ** math.floor(math.log10(span / count))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if span / (m * magnitude) <= count)
    first = math.ceil(lo / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def rating_chart(
    points: Sequence[tuple[Any, Any, Any]],
    *,
    title: str,
    width: int = 640,
    height: int = 250,
    min_span: float = MIN_RATING_SPAN,
) -> Markup | None:
    """A rating's history: one point a game (``(game number, mu, sigma)``), the line of mu over a
    band of mu +- sigma, with labelled axes (games, rating) and a y axis of at least ``min_span``
    rating points. None with fewer than two drawable points."""
    rows: list[tuple[float, float, float]] = []
    for a, b, c in points:
        x, mu, sigma = real(a), real(b), real(c)
        if x is not None and mu is not None and sigma is not None:
            rows.append((x, mu, abs(sigma)))
    if len(rows) < 2:
        return None
    left, right, top, bottom = 58, 14, 12, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    lo, hi = min(m - s for _, m, s in rows), max(m + s for _, m, s in rows)
    if hi - lo < min_span:
        middle = (lo + hi) / 2
        lo, hi = middle - min_span / 2, middle + min_span / 2
    found = nice_ticks(lo, hi)
    step = found[1] - found[0] if len(found) > 1 else 1.0
    lo, hi = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step  # the axis ends on ticks
    yticks = [round(lo + i * step, 10) for i in range(round((hi - lo) / step) + 1)]
    x0, x1 = rows[0][0], rows[-1][0]

    def px(x: float) -> float:
        return _x(x, x0, x1, left, plot_w)

    def py(y: float) -> float:
        return top + plot_h - (y - lo) / (hi - lo) * plot_h

    line = " ".join(f"{px(x):.1f},{py(m):.1f}" for x, m, _ in rows)
    upper = [f"{px(x):.1f},{py(m + s):.1f}" for x, m, s in rows]
    band = " ".join(upper + [f"{px(x):.1f},{py(m - s):.1f}" for x, m, s in rows[::-1]])
    xticks = [t for t in nice_ticks(x0, x1, 6) if t == int(t)]
    last = rows[-1]
    return fragment(
        "chart_rating.svg.j2",
        title=title,
        summary=f"{title}: from game {x0:g} to {x1:g}, mu {rows[0][1]:.2f} to {last[1]:.2f}, sigma now {last[2]:.2f}",
        width=width,
        height=height,
        left=left,
        right=width - right,
        top=top,
        base=top + plot_h,
        middle_x=left + plot_w / 2,
        middle_y=top + plot_h / 2,
        yticks=[{"y": py(t), "text": f"{t:g}"} for t in yticks],
        xticks=[{"x": px(t), "text": f"{t:g}"} for t in xticks],
        line=line,
        band=band,
    )
