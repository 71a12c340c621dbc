"""Running a tournament: entrants, plan, resume, backends, progress and Ctrl-C.

:func:`plan` turns the command line into a :class:`Plan` (entrants, rules,
schedule, the settings that must match to resume). :func:`run` opens the
database, skips finished games, plays the rest on a backend and stores each
game as it comes back; the parent process is the only database writer.
"""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..authoring import submissions
from ..game.rules import Rules
from ..playing.match import entrant_labels
from ..seats.loader import resolve_bot
from ..trust.botsource import BotSource
from ..trust.files import NotRegularFile
from ..trust.text import clean_name, escape
from .backends.games import Job
from .backends.local import Batches
from .loop import FixedPlanner, play
from .loop import SetupError as SetupError
from .plan.plan import Entrant, Plan
from .plan.schedule import DEFAULT_MAX_TABLES, MAX_GAMES, GameKey, Schedule, default_sizes
from .results.teams import Team, parse_team


def collect(specs: Sequence[str]) -> list[BotSource]:
    """Bots from registered names, bot files and folders of bot files (their ``*.py``,
    in name order; other files such as submission manifests are ignored).

    A file that exists but cannot be loaded (not UTF-8, too large, unreadable) is still
    entered: it is recorded as crashed in each of its games (see :func:`preflight`).

    :raises BotLoadError: an unknown name or a path that is no file.
    :raises SetupError: a folder without bot files.
    """
    found: list[BotSource] = []
    folders: dict[str, bool] = {}

    def in_submissions(f: Path) -> bool:
        """Whether ``f``'s folder is a submissions folder (there a hard link is refused too)."""
        parent = os.path.realpath(f.parent)
        if parent not in folders:
            try:
                folders[parent] = submissions.scan(Path(parent)).submissions
            except NotRegularFile as exc:
                raise SetupError(str(exc)) from None
        return folders[parent]

    for spec in specs:
        p = Path(spec)
        if p.is_dir() and not os.path.lexists(p / "bot.toml"):  # a folder of bots (not a bot folder)
            # the organiser names the folder; what is in it is checked
            # every *.py entry is a bot file: a link, FIFO, device or folder among them is refused
            # (and every *.js; a sub-folder holding a bot.toml is a bot program's folder: a link refused)
            files = sorted(
                f
                for f in p.iterdir()
                if (f.suffix in (".py", ".js") or (f.is_dir() and (f / "bot.toml").exists()))
                and not f.name.startswith(("_", "."))
            )
            if not files:
                raise SetupError(f"{spec}: a folder with no bot files (*.py, *.js, folders with a bot.toml)")
            found.extend(resolve_bot(str(f), lenient=True, single_link=in_submissions(f)) for f in files)
        else:
            linked = os.path.lexists(spec) and in_submissions(p)
            found.append(resolve_bot(spec, lenient=True, single_link=linked))
    return found


def entrants(specs: Sequence[str], *, trusted: bool = False) -> list[Entrant]:
    """Entrants in command-line order; a file's label is its file name without ``.py``
    (cleaned; ``NAME (file)`` when it is a reserved name, see :func:`~arena.playing.match.entrant_labels`),
    a registered bot's its name; repeats get ``#2``, ``#3``..."""
    return entrants_of(collect(specs), trusted=trusted)


def entrants_of(sources: Sequence[BotSource], *, trusted: bool = False) -> list[Entrant]:
    """:func:`entrants` of resolved bots."""
    labels = entrant_labels(
        [s.name if s.origin == "registry" else clean_name(Path(s.path or s.name).stem) for s in sources],
        [s.origin for s in sources],
    )
    return [
        Entrant(src, label, trusted or src.origin == "registry") for src, label in zip(sources, labels, strict=True)
    ]


def plan(
    specs: Sequence[str],
    *,
    sizes: Sequence[int] | None,
    deals: int,
    seed: int,
    rules: Rules,
    trusted: bool = False,
    max_tables: int = DEFAULT_MAX_TABLES,
    allow_unverified: bool = False,
    limits: Any = None,
    teams: Sequence[str] = (),
) -> Plan:
    """Resolve bots, verify the files of submissions folders against their manifests, and build
    the schedule. :raises SetupError:, :raises BotLoadError:. ``limits``: the sandbox's
    :class:`~arena.sandbox.Limits` (its move and game times are settings). With the rules'
    ``teams`` on, each of ``specs`` is a team of that bot twice and each of ``teams``
    (``NAME=BOT1,BOT2``) a named pair (:func:`team_entrants`)."""
    partners: tuple[Team, ...] = ()
    if rules.teams:
        people, partners = team_entrants(specs, teams, trusted=trusted)
    elif teams:
        raise SetupError("--team goes with the teams variant (--variant teams or --rule teams=true)")
    else:
        people = entrants(specs, trusted=trusted)
    try:
        check = submissions.verify([(e.src.path if e.src.origin == "file" else None, e.src.sha256) for e in people])
    except NotRegularFile as exc:  # a manifest put in place after the entrants were read
        raise SetupError(str(exc)) from None
    if check.refused and not allow_unverified:
        raise SetupError(submissions.refusal(check.refused))
    people = [replace(e, author=author) for e, author in zip(people, check.authors, strict=True)]
    n = len(partners) if partners else len(people)
    what, per = ("teams", 2) if partners else ("bots", 1)
    if n < 2:
        raise SetupError(f"a tournament needs at least 2 {what}; {n} given")
    sizes = tuple(sizes) if sizes else default_sizes(per * n)
    for k in sizes:
        if k > per * n and not partners:
            raise SetupError(f"a table of {k} needs at least {k} bots; {n} given")
        try:
            rules.check_players(k)  # with teams first: 4 or 6 seats, so k // 2 teams
        except ValueError as exc:
            raise SetupError(str(exc)) from None
        if k > per * n:
            raise SetupError(f"a table of {k} needs at least {k // per} {what}; {n} given")
    games = sum(min(math.comb(n, k // per), max_tables) * deals * k for k in set(sizes))
    if games > MAX_GAMES:
        raise SetupError(
            f"this schedule would be about {games:,} games; at most {MAX_GAMES:,} are played in one "
            "tournament (fewer --games, --players or --max-tables)"
        )
    pairs = [t.members for t in partners]
    schedule = Schedule.build(len(people), sizes, deals=deals, seed=seed, max_tables=max_tables, teams=pairs)
    times = {} if limits is None else {"move_seconds": limits.move_seconds, "game_seconds": limits.game_seconds}
    return Plan(tuple(people), rules, schedule, trusted, tuple(check.refused), **times, teams=partners)


def team_entrants(
    specs: Sequence[str], named: Sequence[str], *, trusted: bool = False
) -> tuple[list[Entrant], tuple[Team, ...]]:
    """The entrants and teams of a teams tournament: each bot of ``specs`` (names, files,
    folders) a team of itself twice, named after it; then each ``NAME=BOT1,BOT2`` of ``named``.
    Members are entrants like any bot (labels made distinct: ``greedy``, ``greedy#2``...).

    :raises SetupError: a bad ``--team``, a team name twice, a folder as a member.
    """
    alone = collect(specs)
    sources: list[BotSource] = []
    for src in alone:
        sources += [src, src]
    team_names = [e.label for e in entrants_of(alone)]
    for text in named:
        try:
            name, first, second = parse_team(text)
        except ValueError as exc:
            raise SetupError(str(exc)) from None
        if name.casefold() in {t.casefold() for t in team_names}:
            raise SetupError(f"--team {escape(text, 100)}: a team named {escape(name)} is already entered")
        for spec in (first, second):
            if Path(spec).is_dir():
                raise SetupError(
                    f"--team {escape(text, 100)}: {escape(spec, 100)} is a folder; a team member is one bot"
                )
            sources += collect([spec])
        team_names.append(name)
    people = entrants_of(sources, trusted=trusted)
    return people, tuple(Team(name, (2 * i, 2 * i + 1)) for i, name in enumerate(team_names))


def preflight(p: Plan) -> list[str]:
    """One warning line per bot that will crash in every game (unreadable, refused by the
    code policy, a syntax error...): it stays entered, so the schedule and a resume are
    the same, and loses each of its games as crashed; and one for the files played with
    --allow-unverified. Also checks that the sandbox exists when bot files need it.
    :raises SetupError:."""
    from ..errors import BotLoadError
    from ..seats.loader import compile_trusted

    check: Callable[[BotSource], object] = compile_trusted
    if not all(e.trusted for e in p.entrants):
        try:
            from ..sandbox import check_source, sandboxed_factory  # noqa: F401
        except ImportError:
            raise SetupError(
                "bot files run in the sandbox, which this installation lacks; "
                "--trusted runs them in-process (only for code you trust)"
            ) from None
        check = check_source
    warnings = []
    if p.unverified:
        warnings.append(
            f"--allow-unverified: playing {len(p.unverified)} bot file"
            f"{'s' if len(p.unverified) != 1 else ''} that do not match a submission: "
            + escape("; ".join(p.unverified), 600)
        )
    for e in p.entrants:
        try:
            (compile_trusted if e.trusted else check)(e.src)
        except BotLoadError as exc:
            warnings.append(f"{escape(exc, 300)}; {escape(e.label)} will be recorded as crashed in each of its games")
    return warnings


# -- running -------------------------------------------------------------------


@dataclass
class RunResult:
    total: int  # games in the schedule
    done: int  # games in the database now
    played: int  # games played by this run
    elapsed: float  # seconds this run spent playing
    interrupted: bool = False
    signum: int = int(signal.SIGINT)  # what interrupted it: Ctrl-C or SIGTERM

    @property
    def rate(self) -> float:
        return self.played / self.elapsed if self.elapsed > 0 else 0.0


#: ``backend(job, keys, stop, more=None)``: plays ``keys``, then (adaptive runs) whatever
#: ``more()`` hands out once they are all back, until it hands out nothing.
Backend = Callable[..., Batches]


def local_backend(workers: int) -> Backend:
    from .backends.local import More, in_pool, in_process

    def run(job: Job, keys: Sequence[GameKey], stop: Callable[[], bool], more: More | None = None) -> Batches:
        if workers == 1:
            return in_process(job, keys, stop, more)
        return in_pool(job, keys, workers, stop, more=more)

    return run


def ray_backend(workers: int, address: str | None) -> Backend:
    from .backends import ray_tasks as rb

    def run(
        job: Job, keys: Sequence[GameKey], stop: Callable[[], bool], more: Callable[[], Sequence[GameKey]] | None = None
    ) -> Batches:
        return rb.run(job, keys, workers=workers, address=address, stop=stop, more=more)

    return run


def run(
    p: Plan,
    db_path: str | os.PathLike[str],
    backend: Backend,
    *,
    replays: str | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_played: Callable[[int], None] | None = None,
    force: bool = False,
    sandbox: dict[str, Any] | None = None,
) -> RunResult:
    """Play every game of ``p`` not yet in the database at ``db_path``, storing each as it ends:
    the tournament loop (:func:`.loop.play`) fed by the one-round plan of a fixed schedule.

    ``replays`` is a folder for the records, refused when it holds files this tournament did not
    write (see :mod:`.db.replays`) unless ``force``.

    :raises TournamentDBError: the database is foreign, damaged or of another tournament.
    """
    planner = FixedPlanner(p.schedule)
    total = p.schedule.total_games

    def started() -> None:
        if on_start:
            on_start(len(planner.done), total)

    out = play(
        p,
        db_path,
        backend,
        planner,
        replays=replays,
        force=force,
        sandbox=sandbox,
        on_start=started,
        on_played=on_played,
    )
    done = len(planner.done)
    return RunResult(total, done, out.played, out.elapsed, interrupted=out.stopped and done < total, signum=out.signum)


def gauntlet_plan(p: Any, max_tables: int) -> Any:
    """``p`` (whose first entrant is the new bot) with every table holding the new bot."""
    from .plan.schedule import gauntlet_schedule, with_tables

    if len(p.schedule.sizes) != 1:
        raise SetupError("a gauntlet plays one table size; give one --players size")
    size = p.schedule.sizes[0].size
    try:
        tables = gauntlet_schedule(len(p.entrants) - 1, size, max_tables, p.schedule.seed)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    return replace(p, schedule=with_tables(p.schedule, tables, "gauntlet"))
