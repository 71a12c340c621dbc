"""Built-in rule variants and result reporters."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from ..hookspecs import hookimpl


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


def table(doc: dict[str, Any]) -> str:
    headers, rows = _rows(doc)
    return tabulate(rows, headers=headers, floatfmt=".3f")


def markdown(doc: dict[str, Any]) -> str:
    headers, rows = _rows(doc)
    return tabulate(rows, headers=headers, tablefmt="github", floatfmt=".3f")


def as_csv(doc: dict[str, Any]) -> str:
    headers, rows = _rows(doc)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return out.getvalue().rstrip("\n")


def as_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2)


@hookimpl
def arena_reporters() -> dict[str, Callable[[dict[str, Any]], str]]:
    return {"table": table, "markdown": markdown, "csv": as_csv, "json": as_json}
