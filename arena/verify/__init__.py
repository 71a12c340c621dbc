"""``arena verify``: an organiser's audit of game records, by an independent rules checker.

The checker re-implements docs/rules.md from scratch and re-simulates every game
of a JSON Lines record (docs/record-format.md) line by line: deals against the
deck, every put, draw and finish against R4 to R7, effects, reshuffles, round
scores, burns and places. It uses the standard library only and imports
nothing else from the ``arena`` package (a test keeps it so), so the referee
and the checker would have to be wrong in the same way for a bad record to
pass.

API::

    verify_file(path)  -> list[GameVerdict]   # one verdict per game
    check_file(path)   -> list[str]           # every error, [] when all games are valid
    check_lines(objs)  -> list[str]           # the same for already-parsed lines

Each error names the game id, the line number (1-based) and the rule broken,
e.g. ``"game 3 line 57: R4.3 after 9h only rank 9 may follow, not 7c"``.
"""

from __future__ import annotations

from .check import GameVerdict, check_file, check_lines, printable, verify_file, verify_lines

__all__ = ["GameVerdict", "check_file", "check_lines", "verify_file", "verify_lines", "printable"]
