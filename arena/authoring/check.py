"""What the bot author's commands (``arena new``, ``arena check``, ``arena submit``) run.

``new`` writes a commented starting bot. ``check`` loads a bot exactly as a
tournament will (the sandbox's static check, then a sandboxed worker) and
plays smoke games against the reference bots at 2, 3, 4 and 6 players,
reporting problems with file and line, faults with kind and detail, and the
bot's time per move. ``submit`` runs the check and stores a clean bot with
a JSON manifest in the organiser's submissions folder.
"""

from __future__ import annotations

import os
import re
import statistics
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import BotLoadError, UsageError
from ..game.events import FaultKind
from ..game.rules import CONTEST, Rules
from ..game.seeds import game_seeds
from ..sandbox.limits import Limits
from ..seats.contract import SeatFactory
from ..trust.files import NotRegularFile, regular
from ..trust.text import escape

#: A bot name usable as a file name: letters, digits, ``-`` and ``_``, from a letter.
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")
#: Names ``arena play`` gives another meaning.
RESERVED_NAMES = frozenset({"human"})
#: Reference bots the smoke games seat, in this order, when registered.
REFERENCE_BOTS = ("random", "greedy", "heuristic")
#: Table sizes the smoke games cover.
TABLE_SIZES = (2, 3, 4, 6)
#: The warning for a bot without a description, worded for its kind (a file's or folder's runtime).
NO_DESCRIPTION = {
    "python": "no docstring: its first line is the bot's description in results and submissions",
    "node": "no description: a comment at the top of the file (// ...) is the bot's description "
    "in results and submissions",
    "program": "no description: bot.toml's description is the bot's description in results and submissions",
}
#: Fault kinds after which further smoke games would only be slow.
STOPPING_FAULTS = (FaultKind.TIMEOUT, FaultKind.CRASH)
#: Records of smoke games in which the bot faulted kept with a report (:attr:`CheckReport.records`), the first ones.
KEPT_RECORDS = 8


# -- arena new ------------------------------------------------------------------


def bot_target(text: str) -> tuple[str, Path]:
    """``NAME`` or ``path/NAME.py`` -> (bot name, file path). :raises UsageError: bad name."""
    path = Path(text if text.endswith(".py") else text + ".py")
    name = path.stem
    if not NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a usable bot name: use letters, digits, - and _, "
            "starting with a letter, at most 40 characters"
        )
    if name.lower() in RESERVED_NAMES:
        raise UsageError(f"{name!r} is reserved (`arena play human ...` seats you); choose another name")
    return name, path


def render_template(name: str, file: str) -> str:
    """The starting bot's source for bot ``name`` written to ``file``: its comment on the commands
    to try keeps one column for the explanations, however long the file's name."""
    text = resources.files("arena.authoring").joinpath("templates", "bot.py.tmpl").read_text(encoding="utf-8")
    commands = (
        (f"arena play human {file}", "play a game against it yourself"),
        (f"arena play {file} greedy", "100 games against a reference bot"),
        (f"arena check {file}", "the organiser's check (sandbox, smoke games)"),
        ("arena rules", "the rules (R1..R10) the referee enforces"),
    )
    width = max(len(command) for command, _ in commands) + 4
    lines = "\n".join(f"#   {command.ljust(width)}-- {what}" for command, what in commands)
    return string.Template(text).substitute(name=name, file=file, commands=lines)


# -- arena check ------------------------------------------------------------------


@dataclass
class CheckReport:
    """What ``arena check`` found; ``clean`` only without problems and faults."""

    path: str
    bot: str = ""
    description: str = ""
    sha256: str = ""
    problems: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sandbox: dict[str, Any] = field(default_factory=dict)
    rules: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    tables: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    move_times: list[float] = field(default_factory=list)
    #: What ``move_times`` measure: the sandbox's CPU time per move (what the limit counts), or wall time.
    clock: str = "wall-clock time"
    stopped: str = ""
    #: A bot program's runtime, language and built files' sha256 (empty for a Python bot file).
    program: dict[str, Any] = field(default_factory=dict)
    #: The smoke games in which the bot faulted, to replay (at most :data:`KEPT_RECORDS`): each its
    #: ``game`` id, the bot's ``seat``, the whole record (``log``: hidden cards too, so shown only as
    #: R10 lets a reader see it) and the bot's own ``output``. Not part of :meth:`to_dict`.
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems and not self.faults and bool(self.tables)

    def timing(self) -> dict[str, Any]:
        """Time per move of the checked bot, in milliseconds."""
        times = self.move_times
        if not times:
            return {"moves": 0, "median_ms": None, "worst_ms": None}
        return {
            "moves": len(times),
            "median_ms": round(statistics.median(times) * 1000, 3),
            "worst_ms": round(max(times) * 1000, 3),
            "clock": self.clock,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "bot": self.bot,
            "description": self.description,
            "sha256": self.sha256,
            "clean": self.clean,
            "problems": self.problems,
            "warnings": self.warnings,
            "faults": self.faults,
            "tables": self.tables,
            "move_time": self.timing(),
            "sandbox": self.sandbox,
            "rules": self.rules,
            "seed": self.seed,
            **({"stopped": self.stopped} if self.stopped else {}),
            **({"program": self.program} if self.program else {}),
        }

    def fault_count(self) -> int:
        """Faults of the bot (retirements are their consequence, not counted)."""
        return sum(1 for f in self.faults if f["kind"] != FaultKind.RETIRED)

    def lines(self) -> Iterator[str]:
        """The report for a terminal."""
        path = escape(self.path)
        head = f"checking {path}"
        if self.bot:
            head += f": bot {escape(repr(self.bot))}, sha256 {self.sha256[:12]}"
        yield head
        summary = self.sandbox.get("summary", "")
        if summary:
            yield "  " + summary if summary.startswith("sandbox") else f"  sandbox: {summary}"
        yield from report_lines(self.to_dict())
        if self.clean:
            yield f"{path}: clean"
        else:
            reasons = []
            if self.problems:
                reasons.append(plural(len(self.problems), "problem"))
            count = self.fault_count()
            if count:
                reasons.append(plural(count, "fault"))
            yield f"{path}: NOT clean ({', '.join(reasons) or 'no game played'})"


# -- a check report, wherever it was made (here, or by a contest server) -------------


def plural(n: int, word: str) -> str:
    """``1 game``, ``2 games``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _text(value: Any, limit: int = 200) -> str:
    return escape(str(value), limit)


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def _ms(value: Any) -> float:
    return float(value) if type(value) in (int, float) else 0.0


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The dicts of a list read from a report (one from a server is not trusted to be well formed)."""
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def problem_where(p: dict[str, Any]) -> str:
    """``path:line:column`` of a problem (as much of it as is known)."""
    where = str(p.get("path") or "bot")
    if p.get("line"):
        where += f":{p['line']}" + (f":{p['column']}" if p.get("column") else "")
    return where


def fault_groups(faults: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """The bot's faults grouped by kind and detail, in order of first appearance: (first, count)."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for f in _dicts(faults):
        if f.get("kind") != FaultKind.RETIRED:
            key = (str(f.get("kind")), str(f.get("detail")))
            groups.setdefault(key, [f, 0])[1] += 1
    return [(first, count) for first, count in groups.values()]


def failure_reasons(report: dict[str, Any]) -> list[str]:
    """Why a check report (:meth:`CheckReport.to_dict`) is not clean: each problem with its file and
    line, each kind of fault once with its count (``23x exception: ...``)."""
    reasons = [f"{problem_where(p)}: {p.get('message')}" for p in _dicts(report.get("problems"))]
    for f, n in fault_groups(report.get("faults", [])):
        reasons.append(f"{n}x " * (n > 1) + f"{f.get('kind')}: {f.get('detail')}")
    return reasons or ["no smoke game could be played"]


def failure_line(report: dict[str, Any]) -> str | None:
    """The one line saying why a check report is not clean (its first three reasons); None when clean."""
    if report.get("clean"):
        return None
    reasons = failure_reasons(report)
    more = f"; and {len(reasons) - 3} more" if len(reasons) > 3 else ""
    return escape("the check failed: " + "; ".join(reasons[:3]) + more, 600)


def lineups(table: dict[str, Any]) -> str:
    """Who sat against the bot at a table size: each game's opponents in seat order, a line-up
    played more than once counted (``vs random+greedy x2; vs greedy+heuristic``)."""
    found = table.get("lineups")
    if not isinstance(found, list) or not found:  # a report from before line-ups were kept
        opponents = table.get("opponents")
        return "vs " + ", ".join(_text(o, 40) for o in (opponents if isinstance(opponents, list) else []))
    counts: dict[str, int] = {}
    for names in found:
        key = "+".join(_text(x, 40) for x in names) if isinstance(names, list) else _text(names, 40)
        counts[key] = counts.get(key, 0) + 1
    return "; ".join(f"vs {key}" + (f" x{n}" if n > 1 else "") for key, n in counts.items())


def report_lines(report: dict[str, Any]) -> Iterator[str]:
    """A check report's body for a terminal: problems, warnings, tables, grouped faults, time per
    move; every text escaped (a report from a server is shown the same way, and trusted no more)."""
    for p in _dicts(report.get("problems")):
        yield f"  PROBLEM {_text(problem_where(p), 300)}: {_text(p.get('message'), 400)}"
    warnings = report.get("warnings")
    for w in warnings if isinstance(warnings, list) else []:
        yield f"  warning: {_text(w, 400)}"
    rules = report.get("rules")
    changed = rules.get("changed") if isinstance(rules, dict) else None
    if isinstance(changed, dict) and changed:
        yield "  rules: " + ", ".join(f"{_text(k, 40)}={_text(v, 100)}" for k, v in changed.items())
    for t in _dicts(report.get("tables")):
        faults = _count(t.get("faults"))
        status = "no faults" if not faults else plural(faults, "fault")
        found = t.get("places")
        places = ", ".join(_text(p, 4) for p in (found if isinstance(found, list) else []))
        games = plural(_count(t.get("games")), "game")
        yield f"  {_text(t.get('players'), 4)} players: {games} ({lineups(t)}); places {places}; {status}"
    for f, n in fault_groups(report.get("faults", [])):
        yield (
            f"  FAULT {n}x {_text(f.get('kind'), 40)}: {_text(f.get('detail'), 400)} "
            f"(first in game {_text(f.get('game'), 20)}, seat {_text(f.get('seat'), 4)}, "
            f"round {_text(f.get('round'), 6)})"
        )
    retired = sorted({str(f.get("game")) for f in _dicts(report.get("faults")) if f.get("kind") == FaultKind.RETIRED})
    if retired:
        games = "game" if len(retired) == 1 else "games"
        yield f"  retired (the fallback played its seat) in {games} " + escape(", ".join(retired), 200)
    if report.get("stopped"):
        yield f"  stopped early: {_text(report['stopped'], 200)}"
    timing = report.get("move_time")
    if isinstance(timing, dict) and _count(timing.get("moves")):
        median, worst = (_ms(timing.get(k)) for k in ("median_ms", "worst_ms"))
        yield (
            f"  time per move: median {median:.2f} ms, worst {worst:.2f} ms "
            f"over {_text(timing['moves'], 10)} moves"
            + (f" ({_text(timing['clock'], 40)})" if timing.get("clock") else "")
        )


def sandbox_api() -> Any:
    """The sandbox module (its ``check_source``, ``sandboxed_factory``, ``hardening_report``)."""
    try:
        from .. import sandbox

        sandbox.check_source, sandbox.sandboxed_factory, sandbox.hardening_report  # noqa: B018
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"the sandbox is not available in this installation ({exc})") from None
    return sandbox


def reference_opponents() -> list[str]:
    """The registered reference bots the smoke games seat."""
    from ..seats.loader import registry

    known = registry()
    return [name for name in REFERENCE_BOTS if name in known]


def problem(exc: BotLoadError, path: str) -> dict[str, Any]:
    found = {"path": exc.path or path, "line": exc.line, "message": exc.message}
    return found | ({"column": exc.column} if exc.column else {})


def describe_sandbox(sandbox: Any) -> dict[str, Any]:
    """The hardening layers a worker gets here (the probe reports a failed probe itself: an
    exception out of it is a bug, not news for the report)."""
    report = sandbox.hardening_report()
    return {"layers": dict(report.layers), "summary": report.summary()}


@dataclass(frozen=True)
class CheckSettings:
    """How ``arena check`` checks a bot: the rules and seed of its smoke games, how many per
    table size, and the sandbox's limits (None: the defaults)."""

    rules: Rules = CONTEST
    games: int = 2
    seed: int = 0
    limits: Limits | None = None


def run_check(
    path: str, settings: CheckSettings = CheckSettings(), *, data: bytes | None = None, src: Any = None
) -> CheckReport:
    """Check the bot file at ``path`` as a tournament loads it; see :class:`CheckReport`.
    With ``data`` (the file's bytes, already read) the file is not read again: exactly
    those bytes are checked.

    :raises UsageError: no such file, or no sandbox.
    """
    from ..trust.botsource import bot_source, read_bot_file

    rules, games, seed, limits = settings.rules, settings.games, settings.seed, settings.limits
    report = CheckReport(path, seed=seed, rules={"name": rules.name, "changed": rules.changed()})
    from ..trust.botfolder import is_bot_folder

    if src is not None or (data is None and is_bot_folder(path)):
        pass  # a bot program's folder (bot.toml): read by read_bot_file like any bot
    elif data is None:
        try:  # a link, FIFO, device or folder is refused in one line, before anything is read
            regular(path)
        except NotRegularFile as exc:
            raise UsageError(str(exc)) from None
        except OSError:
            if not os.path.lexists(path):
                raise UsageError(f"{path}: no such file") from None
    sandbox = sandbox_api()
    report.sandbox = describe_sandbox(sandbox)
    try:
        if src is None:  # given: a bot folder already read (``arena submit`` stores exactly those files)
            src = read_bot_file(path) if data is None else bot_source(data, path)
    except BotLoadError as exc:
        report.problems.append(problem(exc, path))
        return report
    report.bot, report.description, report.sha256 = src.name, src.description, src.sha256
    if not src.description:
        report.warnings.append(NO_DESCRIPTION.get(src.runtime, NO_DESCRIPTION["python"]))
    try:
        sandbox.check_source(src)
        factory = sandbox.sandboxed_factory(src, limits=limits)
    except BotLoadError as exc:
        report.problems.append(problem(exc, path))
        return report
    if src.runtime != "python":  # a program's own layers (the launcher's report), not a Python worker's
        report.program = {"runtime": src.runtime, **factory.program}
        layers = {k: v for k, v in factory.report.items() if k != "supervision"}
        active = [k for k, v in layers.items() if v == "active"]
        others = "; ".join(f"{k} {v}" for k, v in layers.items() if v != "active")
        summary = f"sandbox hardening ({src.runtime}) {len(active)}/{len(layers)} active: {', '.join(active)}"
        report.sandbox = {"layers": layers, "summary": summary + (f"; {others}" if others else "")}

    try:
        play_smoke_games(report, src, factory, rules=rules, games=games, seed=seed)
        if factory.move_cpu:  # the sandbox's own measure: CPU time per move, what the limit counts
            report.move_times, report.clock = list(factory.move_cpu), "CPU time"
    finally:
        factory.close()
    if report.problems or report.stopped:
        return report
    slow = slow_warning(report, limits)
    if slow:
        report.warnings.append(slow)
    return report


def play_smoke_games(
    report: CheckReport, src: Any, factory: SeatFactory, *, rules: Rules, games: int, seed: int
) -> None:
    """Seat the bot against the reference bots at each table size; add tables, faults and times to ``report``.

    Stops at a load error (a problem) or after a game with a timeout or crash (slow to repeat).
    """
    from ..game.referee import BotFault
    from ..seats.factories import make_factory
    from ..seats.loader import resolve_bot
    from ..seats.seating import Chair, Seating

    opponents = reference_opponents()
    if not opponents:
        raise UsageError("no reference bots are registered to play the smoke games against")
    # The checked bot is the entrant "" (no registered name is empty); no stand-ins: a bot that
    # cannot be loaded or seated is the report's problem or fault.
    factories: dict[str, SeatFactory] = {name: make_factory(resolve_bot(name), trusted=True) for name in opponents}
    factories[""] = factory
    seating = Seating(factories.__getitem__, rules=rules, stand_ins=False)
    try:
        for n in TABLE_SIZES:
            try:
                rules.check_players(n)
            except ValueError:
                continue
            table: dict[str, Any] = {"players": n, "games": 0, "faults": 0, "places": [], "opponents": []}
            for g in range(games):
                seat = g % n
                names = [opponents[(g + i) % len(opponents)] for i in range(n - 1)]
                names.insert(seat, "")
                game_id = f"{n}p-{g + 1}"
                chairs = [Chair(name, src.label if s == seat else name) for s, name in enumerate(names)]
                try:
                    outcome = seating.play(chairs, game_seeds(seed, "check", (n, g), (n, g)), game_id)
                except BotLoadError as exc:
                    report.problems.append(problem(exc, report.path))
                    return
                except BotFault as exc:
                    report.faults.append(
                        {
                            "game": game_id,
                            "players": n,
                            "seat": seat,
                            "round": 0,
                            "kind": exc.kind.value,
                            "detail": exc.detail,
                        }
                    )
                    report.stopped = f"the bot could not be seated in game {game_id}"
                    return
                table["games"] += 1
                table["opponents"] = sorted(set(table["opponents"]) | {name for name in names if name})
                table.setdefault("lineups", []).append([name for name in names if name])  # who sat, in seat order
                table["places"].append(outcome.result.places[seat])
                report.move_times.extend(outcome.move_times[seat])
                mine = [f for f in outcome.faults if f.seat == seat]
                table["faults"] += sum(1 for f in mine if f.kind is not FaultKind.RETIRED)
                for f in mine:
                    report.faults.append(
                        {
                            "game": game_id,
                            "players": n,
                            "seat": seat,
                            "round": f.round,
                            "kind": f.kind.value,
                            "detail": f.detail,
                        }
                    )
                if mine and len(report.records) < KEPT_RECORDS:
                    output = outcome.outputs[seat] if seat < len(outcome.outputs) else ""
                    report.records.append({"game": game_id, "seat": seat, "log": outcome.log, "output": output})
                stopping = sorted({f.kind for f in mine if f.kind in STOPPING_FAULTS})
                if stopping:
                    report.tables.append(table)
                    report.stopped = f"a {'/'.join(stopping)} in game {game_id}"
                    return
            report.tables.append(table)

    finally:
        seating.close()


def slow_warning(report: CheckReport, limits: Limits | None) -> str | None:
    """A warning when the worst move took over half the per-move time limit."""
    budget = (limits or Limits()).move_seconds
    worst = max(report.move_times, default=0.0)
    if worst > budget / 2:
        return f"worst move took {worst * 1000:.0f} ms, over half the {budget * 1000:.0f} ms limit"
    return None
