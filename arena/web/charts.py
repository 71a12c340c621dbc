"""Charts for the report as plain inline SVG (no library, no script, works offline).

Every label is escaped; sizes and colours are computed here, never taken
from data a contestant controls.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def _x(value: float, lo: float, hi: float, left: float, width: float) -> float:
    return left + (value - lo) / (hi - lo) * width if hi > lo else left


def interval_chart(
    rows: Sequence[tuple[str, float | None, float | None]],
    *,
    lo: float,
    hi: float,
    title: str,
    ticks: Sequence[float],
    width: int = 640,
) -> str:
    """One row per label: a dot at the value and a bar over its interval (value, half-width).

    Rows without a value are drawn as "no games"; a missing half-width draws the dot alone.
    """
    row_h, left, right, top = 26, 170, 20, 10
    plot_w = width - left - right
    height = top + row_h * len(rows) + 26
    out = [
        f'<figure class="chart-box"><figcaption>{escape(title)}</figcaption>'
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for t in ticks:
        x = _x(t, lo, hi, left, plot_w)
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 22}" class="grid"/>')
        out.append(f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle" class="tick">{t:g}</text>')
    for i, (label, value, half) in enumerate(rows):
        y = top + row_h * i + row_h / 2
        short = label if len(label) <= 22 else label[:21] + "\u2026"
        out.append(
            f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end" class="label">{escape(short)}'
            f"<title>{escape(label)}</title></text>"
        )
        if value is None:
            out.append(f'<text x="{left + 4}" y="{y + 4:.1f}" class="tick">no games</text>')
            continue
        if half is not None:
            a = _x(max(lo, value - half), lo, hi, left, plot_w)
            b = _x(min(hi, value + half), lo, hi, left, plot_w)
            out.append(f'<line x1="{a:.1f}" y1="{y:.1f}" x2="{b:.1f}" y2="{y:.1f}" class="ci"/>')
            for end in (a, b):
                out.append(f'<line x1="{end:.1f}" y1="{y - 6:.1f}" x2="{end:.1f}" y2="{y + 6:.1f}" class="ci"/>')
        x = _x(min(hi, max(lo, value)), lo, hi, left, plot_w)
        tip = f"{label}: {value:.3f}" + (f" \u00b1 {half:.3f}" if half is not None else "")
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" class="dot"><title>{escape(tip)}</title></circle>')
    out.append("</svg></figure>")
    return "".join(out)


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


def heat_map(labels: Sequence[str], cells: dict[tuple[int, int], tuple[float, int]], *, title: str) -> str:
    """The head-to-head matrix: cell (row, column) is the share of shared games in which the
    row bot placed above the column bot, coloured from red (0) through white to green (1)."""
    n = len(labels)
    cell = 44 if n <= 12 else 30 if n <= 24 else 18
    left, top = 190, 22
    width, height = left + cell * n + 10, top + cell * n + 10
    out = [
        f'<figure class="chart-box"><figcaption>{escape(title)}</figcaption>'
        f'<svg class="chart heat" viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px" '
        f'role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for j in range(n):
        out.append(
            f'<text x="{left + cell * j + cell / 2:.1f}" y="{top - 8}" text-anchor="middle" class="tick">{j + 1}'
            f"<title>{escape(labels[j])}</title></text>"
        )
    for i, label in enumerate(labels):
        y = top + cell * i
        short = label if len(label) <= 22 else label[:21] + "\u2026"
        out.append(
            f'<text x="{left - 8}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" class="label">{i + 1}. '
            f"{escape(short)}<title>{escape(label)}</title></text>"
        )
        for j in range(n):
            x = left + cell * j
            if i == j:
                out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" class="diag"/>')
                continue
            found = cells.get((i, j))
            if found is None:
                out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" class="none"/>')
                continue
            share, games = found
            tip = f"{labels[i]} above {labels[j]} in {share:.0%} of {games} shared games"
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{heat_colour(share)}" '
                f'class="cell"><title>{escape(tip)}</title></rect>'
            )
            if cell >= 30:
                out.append(
                    f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" '
                    f'class="cell-text">{share:.2f}</text>'
                )
    out.append("</svg></figure>")
    return "".join(out)
