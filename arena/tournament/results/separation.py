"""Which neighbours of the standings are separated, judged on paired block differences.

For a fixed schedule (one look at the results) each adjacent pair gets the
bootstrap interval over shared duplicate blocks of the upper bot's paired
score difference (:func:`~.stats.bootstrap_interval`); it is *separated* when
that interval lies above 0. For an adaptive tournament the verdicts are those
of its sequential test (:mod:`arena.tournament.plan.adaptive`), valid under its repeated looks,
with the same interval shown for reading.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...trust.text import render_table, safe_line
from ..plan.adaptive import METHOD
from .finished import GameResult
from .stats import block_scores, bootstrap_interval, paired_differences


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def fixed_doc(
    labels: Sequence[str],
    games: Sequence[GameResult],
    order: Sequence[str],
    confidence: float = 0.95,
    gauntlet: bool = False,
) -> dict[str, Any]:
    """Adjacent pairs of ``order`` (labels, best first), or in a gauntlet the new bot (the
    first label) against each of the field, with fixed-sample paired intervals."""
    index = {label: i for i, label in enumerate(labels)}
    diffs = paired_differences(block_scores(games))
    pairs = []
    compared = [(labels[0], f) for f in labels[1:]] if gauntlet else list(zip(order, order[1:], strict=False))
    for up, low in compared:
        a, b = index[up], index[low]
        values = diffs.get((a, b)) or [-d for d in diffs.get((b, a), [])]
        pairs.append(_pair(up, low, values, confidence, gauntlet))
    return {
        "method": f"paired bootstrap over shared duplicate blocks, {confidence:.0%} per pair, one look",
        "confidence": confidence,
        "pairs": pairs,
        "compares": "the new bot against each of the field" if gauntlet else "every adjacent pair",
        "settled": bool(pairs) and all(p["separated"] for p in pairs),
    }


def _pair(up: str, low: str, values: Sequence[float], confidence: float, either: bool = False) -> dict[str, Any]:
    """One comparison; ``either``: a difference of either sign settles it (a gauntlet)."""
    mean = math.fsum(values) / len(values) if values else None
    ci = bootstrap_interval(values, confidence, lo=-1.0, hi=1.0)
    above, below = ci is not None and ci[0] > 0, ci is not None and ci[1] < 0
    separated = above or (either and below)
    if not values:
        verdict = "no shared block"
    elif either:
        verdict = "better" if above else "worse" if below else "not separated"
    else:
        verdict = "separated" if above else "reversed" if below else "not separated"
    return {
        "upper": up,
        "lower": low,
        "blocks": len(values),
        "diff": _r(mean),
        "diff_lo": _r(ci[0]) if ci else None,
        "diff_hi": _r(ci[1]) if ci else None,
        "separated": separated,
        "verdict": verdict,
    }


def adaptive_doc(labels: Sequence[str], games: Sequence[GameResult], state: Any) -> dict[str, Any]:
    """The comparisons of an adaptive tournament's replayed :class:`~arena.tournament.plan.adaptive.State`."""
    d = state.design
    diffs = paired_differences(block_scores(games))
    pairs = []
    for up, low in state.comparisons():
        rep = state.report((up, low))
        values = diffs.get((up, low)) or [-x for x in diffs.get((low, up), [])]
        row = _pair(labels[up], labels[low], values, d.confidence)
        row.update(
            {
                "separated": rep.separated,
                "verdict": rep.verdict if rep.verdict != "not yet" else "not separated",
                "p_value": _r(rep.p_value),
                "tested_blocks": rep.blocks,
            }
        )
        pairs.append(row)
    what = (
        "the new bot against each of the field"
        if d.gauntlet
        else (f"places 1 to {min(d.top, d.bots - 1) + 1}" if d.top else "every adjacent pair")
    )
    if d.method == METHOD:
        how = (
            f"mixture betting test on paired block differences, anytime-valid, Holm's step-down over "
            f"{2 * d.family} directional claims (the first needs anytime p {d.alpha:.2g}, later ones less)"
        )
    else:
        how = (
            f"betting sign test on paired block differences, anytime-valid, "
            f"Bonferroni over {d.family} pairs (alpha {d.alpha:.2g} each)"
        )
    return {
        "method": f"sequential: {how}",
        "confidence": d.confidence,
        "compares": what,
        "pairs": pairs,
        "status": state.status,
        "settled": all(p["separated"] for p in pairs),
    }


def format_separation(sep: dict[str, Any], fmt: str = "table") -> str:
    """The comparisons as a table (``fmt`` ``table`` or ``markdown``) with a heading line."""
    rows = []
    for p in sep["pairs"]:
        ci = "-" if p["diff_lo"] is None else f"{p['diff_lo']:+.3f} to {p['diff_hi']:+.3f}"
        diff = "-" if p["diff"] is None else f"{p['diff']:+.3f}"
        anytime = [f"{p['p_value']:.2g}"] if "p_value" in p else []
        rows.append([f"{p['upper']} > {p['lower']}", p["blocks"], diff, ci, *anytime, p["verdict"]])
    headers = [
        "pair",
        "shared blocks",
        "paired diff",
        f"{sep['confidence']:.0%} interval",
        *(["anytime p"] if sep["pairs"] and "p_value" in sep["pairs"][0] else []),
        "verdict",
    ]
    head = ("## " if fmt == "markdown" else "") + safe_line(f"Separation ({sep['method']})", fmt)
    if not rows:
        return head + "\n(no pairs)"
    return head + "\n" + render_table(rows, headers, fmt)


def separation_of(
    tables: dict[int, tuple[tuple[int, ...], ...]],
    settings: dict[str, Any],
    labels: Sequence[str],
    games: Sequence[GameResult],
    doc: dict[str, Any],
) -> dict[str, Any]:
    """The separation section of the standings: an adaptive tournament's sequential verdicts
    (its decisions replayed from the stored games), else fixed-sample paired intervals of the
    overall order's neighbours."""
    if "adaptive" in settings:
        from ..plan.adaptive import AdaptivePlanner, design_of

        design = design_of(settings, len(labels), [t for size in sorted(tables) for t in tables[size]])
        replay = AdaptivePlanner(design, budget=max(len(games), 1))
        replay.feed(games)
        replay.advance()
        return adaptive_doc(labels, games, replay.state)
    order = [r["bot"] for r in doc["overall"]["standings"] if r["games"]]
    gauntlet = "gauntlet" in settings.get("schedule", {}).values()
    return fixed_doc(labels, games, order, gauntlet=gauntlet)
