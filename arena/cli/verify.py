"""The ``arena verify`` command: per game OK or FAIL with the first disagreement, a summary,
exit status 0 only when every game of every file passes."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..verify.check import GameVerdict, not_a_record, printable, verify_file


def _name(v: GameVerdict) -> str:
    if v.outside:
        return f"lines {v.line}.. before the first game line"
    return f"game {printable(str(v.game)) if v.game is not None else '?'}"


def verdict_line(v: GameVerdict) -> str:
    """``game 3: FAIL line 57: R4.3 ...`` or ``game 3: OK (412 lines)``."""
    if v.ok:
        return f"{_name(v)}: OK ({v.lines} lines)"
    more = len(v.errors) - 1 + v.dropped
    return f"{_name(v)}: FAIL {printable(v.first_error)}" + (f" (and {more} more)" if more else "")


def run(args: argparse.Namespace) -> int:
    """Check each record file; print per-game verdicts and a summary (or JSON)."""
    reports: list[dict[str, Any]] = []
    for path in args.files:
        try:
            why = not_a_record(path)
            if why is not None:
                return _usage(f"{path}: not a game record ({why})")
            verdicts = verify_file(path)
        except IsADirectoryError:
            return _usage(f"{path}: is a folder, not a record file")
        except FileNotFoundError:
            return _usage(f"{path}: no such file")
        except OSError as exc:
            return _usage(f"{path}: cannot read: {exc.strerror or exc}")
        reports.append({"file": path, "verdicts": verdicts})
    verdicts = [v for r in reports for v in r["verdicts"]]
    games = sum(1 for v in verdicts if not v.outside)
    failed = sum(1 for v in verdicts if not v.ok and not v.outside)
    stray = any(v.outside for v in verdicts)
    empty = [r["file"] for r in reports if not r["verdicts"]]
    passed = not failed and not stray and not empty
    if args.json:
        doc = {
            "passed": passed,
            "games": games,
            "ok": games - failed,
            "failed": failed,
            "files": [
                {
                    "file": r["file"],
                    "games": [v.to_dict() for v in r["verdicts"]],
                    "failed": sum(1 for v in r["verdicts"] if not v.ok),
                }
                for r in reports
            ],
        }
        print(json.dumps(doc, indent=2))
        return 0 if passed else 1
    several = len(reports) > 1
    for r in reports:
        prefix = f"{printable(r['file'])}: " if several else ""
        if not r["verdicts"]:
            print(f"{printable(r['file'])}: FAIL no game in this file")
        for v in r["verdicts"]:
            print(prefix + verdict_line(v))
    files = f" in {len(reports)} files" if several else ""
    notes = (["lines outside any game"] if stray else []) + (["a file with no game"] if empty else [])
    print(
        f"{games} game{'s' if games != 1 else ''}{files}: {games - failed} OK, {failed} FAIL"
        + (f"; and {' and '.join(notes)}" if notes else "")
    )
    return 0 if passed else 1


def _usage(message: str) -> int:
    print(f"arena: error: {printable(message)}", file=sys.stderr)
    return 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "verify",
        help="re-check game records against the rules (an organiser's audit)",
        description="Re-simulate every game of one or more record files (JSON Lines, as written by "
        "`arena play --replay` and `arena tournament --replays`) with an independent rules "
        "checker, and print OK or FAIL per game with the first disagreement. "
        "Exit status 0 only when every game passes.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="record file")
    p.add_argument("--json", action="store_true", help="the verdicts as JSON (every error of every game)")
    p.set_defaults(func=run)
