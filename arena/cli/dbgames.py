"""Re-playing a tournament database's bots (``replay --db``, ``view --db``, ``report``,
``tournament``): the sandbox they require, and one game re-played from its key."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from ..sandbox.limits import Limits
from ..trust.text import escape


def check_sandbox(p: Any, limits: Limits, *, allow_weak: bool, quiet: bool) -> dict[str, Any] | None:
    """The hardening layers bot files will run under (None when every entrant is trusted).

    Prints them in one line; refuses, naming the missing layers, unless ``allow_weak``.
    """
    runtimes = sorted({e.src.runtime for e in p.entrants if e.src.runtime != "python"})
    if all(e.trusted for e in p.entrants if e.src.runtime == "python") and not runtimes:
        return None
    from ..sandbox.programs.runtimes import program_layers
    from ..sandbox.python.factory import sandbox_layers

    layers = sandbox_layers(limits)
    for runtime in runtimes:  # a program's layers are its own (docs/protocol.md): each is required too
        layers.update({f"{runtime}:{k}": v for k, v in program_layers(runtime, limits).items()})
    active = [name for name, state in layers.items() if state == "active"]
    missing = [name for name in layers if name not in active]
    line = f"sandbox: {len(active)}/{len(layers)} layers active ({', '.join(active) or 'none'})"
    if missing:
        line += "; missing: " + "; ".join(f"{name} ({layers[name]})" for name in missing)
    if missing and not allow_weak:
        raise UsageError(
            f"the sandbox lacks {', '.join(missing)} on this machine and bot files are untrusted "
            f"code; fix that (see docs/SECURITY.md), or pass --allow-weak-sandbox to run anyway"
        )
    if not quiet:
        print(escape(line.replace("\n", " "), 2000), file=sys.stderr)
    return {"layers": layers, "missing": missing, "allowed_weak": bool(missing and allow_weak)}


def sandbox_check(allow_weak: bool) -> Callable[[Any], None]:
    """What a re-play from a database asks before any bot runs: the sandbox the tournament
    requires (every layer, unless ``--allow-weak-sandbox``), whenever a bot is sandboxed."""

    def approve(plan: Any) -> None:
        limits = Limits(move_seconds=plan.move_seconds, game_seconds=plan.game_seconds)
        found = check_sandbox(plan, limits, allow_weak=allow_weak, quiet=True)
        if found and found["missing"]:
            print(
                f"arena: warning: bot files run in a sandbox without {', '.join(found['missing'])} "
                "(--allow-weak-sandbox)",
                file=sys.stderr,
            )

    return approve


def replay_from_db(db: str, key: str, *, trusted: bool = False, allow_weak: bool = False) -> list[dict[str, Any]]:
    """Re-play one tournament game from its key; its record, checked against the stored result.
    Bots run sandboxed unless ``trusted`` (the command line's ``--trusted``).

    :raises UsageError: a bad database or key, a source that does not match its sha256, or a
        game that came out otherwise (stderr says how).
    """
    from ..tournament.db.database import TournamentDBError
    from ..tournament.rerun import RerunError, open_db, rerun_one

    try:
        conn, meta = open_db(db)
        try:
            record, diffs = rerun_one(conn, meta, key, trusted=trusted, approve=sandbox_check(allow_weak))
        finally:
            conn.close()
    except (TournamentDBError, RerunError) as exc:
        raise UsageError(str(exc)) from None
    if diffs:
        raise UsageError(f"{key}: the re-played game differs from the stored result ({'; '.join(diffs)})")
    assert record.log is not None
    return record.log
