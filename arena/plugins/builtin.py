"""Built-in rule variants and result reporters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..trust.text import render_table, to_csv, to_json
from .hookspecs import hookimpl


@hookimpl
def arena_rule_variants() -> dict[str, dict[str, Any]]:
    return {
        "contest": {},
        "jack-finish": {"jack_finish": 20},
        "stacked": {"stacked_effects": True},
        "teams": {"teams": True},
        "winner-starts": {"first_player": "winner"},
        "no-burn": {"burn": None},
    }


def _rows(doc: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    rows = doc.get("standings", [])
    headers = list(rows[0].keys()) if rows else []
    return headers, [[r[h] for h in headers] for r in rows]


# Every cell goes through the output rules of arena.trust.text: names are contestant text.


def table(doc: dict[str, Any]) -> str:
    headers, rows = _rows(doc)
    return render_table(rows, headers, "table", floatfmt=".3f")


def markdown(doc: dict[str, Any]) -> str:
    headers, rows = _rows(doc)
    return render_table(rows, headers, "markdown", floatfmt=".3f")


def as_csv(doc: dict[str, Any]) -> str:
    headers, rows = _rows(doc)
    return to_csv(headers, rows)


def as_json(doc: dict[str, Any]) -> str:
    return to_json(doc)


@hookimpl
def arena_reporters() -> dict[str, Callable[[dict[str, Any]], str]]:
    return {"table": table, "markdown": markdown, "csv": as_csv, "json": as_json}
