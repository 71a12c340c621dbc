"""``arena play``: a series of games between the same bots, seats rotating."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..game.events import FaultKind
from ..game.referee import GameOutcome
from ..game.rules import CONTEST, Rules
from ..game.seeds import GameSeeds, fresh_seed, warn_if_guessable
from ..game.seeds import game_seeds as seeds_of
from ..records.files import RecordWriter
from ..sandbox.limits import Limits
from ..seats.contract import SeatFactory
from ..seats.factories import make_factory
from ..seats.loader import resolve_bot
from ..trust.botsource import BotSource
from .games import GameSource, MatchTable
from .interrupts import interrupts_deferred


@dataclass
class Tally:
    """Running results of one entrant."""

    bot: str
    kind: str = "file"
    games: int = 0
    wins: int = 0
    losses: int = 0
    place_sum: int = 0
    score_sum: int = 0
    faults: int = 0
    retired: int = 0

    def row(self) -> StandingsRow:
        g = max(self.games, 1)
        return StandingsRow(
            bot=self.bot,
            kind=self.kind,
            games=self.games,
            wins=self.wins,
            losses=self.losses,
            avg_place=round(self.place_sum / g, 3),
            avg_score=round(self.score_sum / g, 2),
            faults=self.faults,
        )


@dataclass
class MatchEntrant:
    spec: str
    label: str
    factory: SeatFactory
    src: BotSource | None = None
    kind: str = "file"  # "registry", "file" or "human"


#: How tables name an entrant's kind.
KINDS = {"registry": "built-in", "file": "file", "human": "human"}


def reserved_names() -> frozenset[str]:
    """Names only built-in entrants may carry (case-insensitively): every registered bot's
    (the reference bots and any plugin's) and ``human``."""
    from ..seats.loader import registry

    return frozenset(name.casefold() for name in registry()) | {"human"}


def entrant_labels(
    names: Sequence[str], kinds: Sequence[str] | None = None, reserved: frozenset[str] | None = None
) -> list[str]:
    """Distinct labels for entrants. Built-in entrants (kind ``registry``, and ``human``)
    are labelled first and keep their names; any other entrant whose name is reserved
    (:func:`reserved_names`; also as ``NAME#2``) is labelled ``NAME (file)``, so a file calling itself
    ``greedy`` can neither pass for the reference bot nor push it to ``greedy#2``;
    a repeated label gets ``#2``, ``#3``..."""
    kinds = list(kinds) if kinds is not None else ["registry"] * len(names)
    if reserved is None:
        reserved = reserved_names() if any(k not in ("registry", "human") for k in kinds) else frozenset()
    out: list[str] = [""] * len(names)
    used: set[str] = set()
    builtin_first = sorted(range(len(names)), key=lambda i: kinds[i] not in ("registry", "human"))
    for i in builtin_first:
        base = names[i]
        if kinds[i] not in ("registry", "human") and _unsuffixed(base).casefold() in reserved:
            base = f"{base} (file)"
        label, n = base, 1
        while label.casefold() in used:
            n += 1
            label = f"{base}#{n}"
        used.add(label.casefold())
        out[i] = label
    return out


def _unsuffixed(name: str) -> str:
    """``greedy#2`` -> ``greedy``: a name dressed as a repeat of a reserved one is reserved too."""
    head, sep, tail = name.rpartition("#")
    return head if sep and tail.isdigit() else name


def build_entrants(
    specs: Sequence[str], *, trusted: bool = False, human: SeatFactory | None = None, limits: Any = None
) -> list[MatchEntrant]:
    """Resolve bot specs into entrants; ``human`` seats the person at the terminal
    (or through the ``human`` factory given, such as the browser seat's); ``limits``: the
    sandbox's :class:`~arena.sandbox.Limits` for bot files (default ones when None)."""
    sources: list[BotSource | None] = []
    for spec in specs:
        sources.append(None if spec == "human" else resolve_bot(spec))
    kinds = [s.origin if s else "human" for s in sources]
    labels = entrant_labels([s.name if s else "human" for s in sources], kinds)
    entrants = []
    for spec, src, label, kind in zip(specs, sources, labels, kinds, strict=True):
        if src is None:
            from .human import human_factory

            entrants.append(MatchEntrant(spec, label, human or human_factory(), kind="human"))
        else:
            entrants.append(
                MatchEntrant(
                    spec,
                    label,
                    make_factory(src, trusted=trusted or src.origin == "registry", limits=limits),
                    src,
                    kind,
                )
            )
    return entrants


def game_seeds(seed: Any, g: int) -> GameSeeds:
    """Game ``g``'s (deal seed, bot key): keyed by the master seed, in separate domains,
    so neither tells anything about the other or about the master seed."""
    return seeds_of(seed, "play", (g,), (g,))


@dataclass(frozen=True)
class MatchSettings:
    """What a match plays: the bots (registered names, bot files, ``human``), how many games,
    the master seed (None: a fresh secret one), the rules, the sandbox's limits for bot files
    (None: the defaults), whether bot files run in-process (``trusted``), and the record file
    to write (``record_file``; ``force`` replaces an existing one)."""

    bots: tuple[str, ...]
    games: int = 100
    seed: int | None = None
    rules: Rules = CONTEST
    limits: Limits | None = None
    trusted: bool = False
    record_file: str | None = None
    force: bool = False
    #: Keep every game's events in :attr:`MatchResult.records` (the Python API; a long CLI run does not).
    keep_records: bool = False
    #: Processes playing games at once (``--workers``); the results are the same for any number.
    workers: int = 1


@dataclass(frozen=True)
class MatchHooks:
    """How a caller follows and steers a match. ``human``: the player factory of the ``human``
    seat (default: the terminal); ``on_game``: each game's outcome once it is recorded and
    tallied; ``notice``: each line for the user (a guessable seed, how an interrupted run
    ended); ``seeds``: game ``g``'s (deal seed, bot key) from the master seed (default
    :func:`game_seeds`); ``until``: asked after each recorded game (its outcome and seating),
    ends the series when it answers True (``arena play --sprt``)."""

    human: SeatFactory | None = None
    on_game: Callable[[GameOutcome], None] | None = None
    notice: Callable[[str], None] | None = None
    seeds: Callable[[Any, int], GameSeeds] | None = None
    until: Callable[[GameOutcome, list[int]], bool] | None = None


@dataclass(frozen=True)
class StandingsRow:
    """One entrant's results over a match (the columns of ``arena play``'s table)."""

    bot: str
    kind: str
    games: int
    wins: int
    losses: int
    avg_place: float
    avg_score: float
    faults: int

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class FirstFault:
    """An entrant's first fault of the match: how many it made in all, and what the first was."""

    bot: str
    count: int
    kind: str
    detail: str
    game: str


@dataclass(frozen=True)
class MatchResult:
    """What a match played: its games, seed and rules, the standings in entrant order, each
    game's record (when kept), the first fault of each faulting entrant, and whether it was
    interrupted (``stopped_by``: the signal, for the exit status)."""

    games: int
    seed: int
    rules: str
    standings: tuple[StandingsRow, ...]
    records: tuple[tuple[dict[str, Any], ...], ...] = ()
    first_faults: tuple[FirstFault, ...] = ()
    secret_seed: bool = False
    interrupted: bool = False
    stopped_by: int | None = None

    def to_doc(self) -> dict[str, Any]:
        """The results document the reporters print (``arena play --json``)."""
        doc: dict[str, Any] = {
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules,
            "standings": [r.to_dict() for r in self.standings],
        }
        if self.interrupted:
            doc["interrupted"] = True
        return doc


def run_match(settings: MatchSettings, hooks: MatchHooks = MatchHooks()) -> MatchResult:
    """Play ``settings.games`` games; game ``g`` seats entrant ``(s + g) % n`` at seat ``s``.

    Without a seed a fresh secret one is drawn; the result holds it (``seed``, and
    ``secret_seed``), for the caller to show once the games are over. It prints nothing:
    see :class:`MatchHooks` for what the caller is told meanwhile.
    """
    games, seed, rules, trusted, notice = settings.games, settings.seed, settings.rules, settings.trusted, hooks.notice
    entrants = build_entrants(settings.bots, trusted=trusted, human=hooks.human, limits=settings.limits)
    secret = seed is None
    if seed is None:
        seed = fresh_seed()
    else:
        warn_if_guessable(
            seed,
            untrusted=any(e.src is not None and not (trusted or e.src.origin == "registry") for e in entrants),
            notice=notice,
        )
    tallies = [Tally(e.label, KINDS.get(e.kind, e.kind)) for e in entrants]
    firsts: dict[int, FirstFault] = {}
    records: list[tuple[dict[str, Any], ...]] = []
    path = settings.record_file
    writer = open_writer(path, force=settings.force, bots=[e.src for e in entrants if e.src]) if path else None
    played = 0
    interrupted = False
    why = "interrupted"
    stopped_by = None
    seeds, master = hooks.seeds or game_seeds, seed
    workers = settings.workers if all(e.kind != "human" for e in entrants) else 1

    def table() -> MatchTable:  # a worker process makes its own entrants (and sandbox templates)
        here = entrants if workers <= 1 else build_entrants(settings.bots, trusted=trusted, limits=settings.limits)
        return MatchTable(here, rules, master, seeds)

    source = GameSource(games, table, workers)
    try:
        for _, order, outcome in source:
            # The record, the tally (and ``until``'s count) together: Ctrl-C or SIGTERM waits
            # for them, so the record file and the results always hold the same games.
            with interrupts_deferred():
                if writer:
                    writer.write_game(outcome.log)
                if settings.keep_records:
                    records.append(tuple(outcome.log))
                record(outcome, order, tallies)
                note_first_faults(outcome, order, firsts, tallies)
                played += 1
                done = hooks.until is not None and hooks.until(outcome, order)
            if hooks.on_game is not None:
                hooks.on_game(outcome)
            if done:
                break
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM (interrupts.Terminated) or a human who left
        interrupted = True
        why = str(exc) or "interrupted"
        stopped_by = getattr(exc, "signum", None)
    finally:
        source.close()
        if writer:
            writer.close()
    if interrupted and notice is not None:
        notice(f"arena: {why} after {played} of {games} games" + ("; results so far:" if played else ""))
    return MatchResult(
        games=played,
        seed=seed,
        rules=rules.name,
        standings=tuple(t.row() for t in tallies),
        records=tuple(records),
        first_faults=tuple(
            FirstFault(tallies[i].bot, tallies[i].faults, f.kind, f.detail, f.game) for i, f in sorted(firsts.items())
        ),
        secret_seed=secret,
        interrupted=interrupted,
        stopped_by=None if stopped_by is None else int(stopped_by),
    )


def note_first_faults(
    outcome: GameOutcome, order: list[int], firsts: dict[int, FirstFault], tallies: list[Tally]
) -> None:
    """Remember each entrant's first fault (a retirement is the consequence, not the fault)."""
    for f in outcome.faults:
        i = order[f.seat]
        if f.kind is not FaultKind.RETIRED and i not in firsts:
            firsts[i] = FirstFault(tallies[i].bot, 0, str(f.kind), f.detail, outcome.game)


class RecordFile:
    """``--replay FILE``: never overwrites what this run did not write.

    A new file is created (exclusively) before the first game, so it is this run's; if the run
    ends before a game was recorded (a human who quits at once), it is removed again. An existing
    file is refused unless ``force``; with ``force`` the name is replaced when the first game is
    written (the old entry removed and a new file created exclusively: a symbolic link is
    replaced, never written through, and a FIFO or device is never opened), so a run that
    records nothing leaves it as it was. A bot's own file is never a record file, ``force`` or
    not.
    """

    def __init__(self, path: str, *, force: bool = False, bots: Sequence[BotSource] = ()) -> None:
        self.path = path
        self.games = 0
        self.created = False
        self.replace = False
        self.writer: RecordWriter | None = None
        target = Path(path)
        if target.is_dir():
            raise UsageError(f"{path}: is a folder; --replay takes a file name")
        for src in bots:
            if src.path and target.exists() and _same_file(target, Path(src.path)):
                raise UsageError(f"{path}: is the bot file of {src.name}; --replay takes another file name")
        try:
            if os.path.lexists(target):
                if not force:
                    raise UsageError(
                        f"{path} already exists; choose another --replay file, or add --force to replace it"
                    )
                folder = target.parent if str(target.parent) else Path(".")
                if not os.access(folder, os.W_OK | os.X_OK):  # replacing the name needs its folder
                    raise UsageError(f"{path}: cannot write: the folder {folder} is not writable")
                self.replace = True
            else:
                self.writer = RecordWriter(target, mode="x")
                self.created = True
        except FileExistsError:  # made since we looked: not ours
            raise UsageError(
                f"{path} already exists; choose another --replay file, or add --force to replace it"
            ) from None
        except IsADirectoryError:
            raise UsageError(f"{path}: is a folder; --replay takes a file name") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot write: {exc.strerror}") from None

    def write_game(self, events: Any) -> None:
        if self.writer is None:
            if self.replace:  # --force: the old name goes, a new file of ours takes its place
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
            self.writer = RecordWriter(self.path, mode="x")
        self.writer.write_game(events)
        self.games += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.created and self.games == 0:
            try:
                os.unlink(self.path)  # ours and empty: leave nothing behind
            except OSError:
                pass


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def open_writer(path: str, *, force: bool = False, bots: Sequence[BotSource] = ()) -> RecordFile:
    """Open the record file before any game is played; a bad or taken path is a usage error."""
    return RecordFile(path, force=force, bots=bots)


def record(outcome: GameOutcome, order: list[int], tallies: list[Tally]) -> None:
    """Add one game's outcome to the entrants' tallies."""
    result = outcome.result
    faults = outcome.fault_counts()
    for seat, i in enumerate(order):
        t = tallies[i]
        t.games += 1
        t.wins += result.places[seat] == 1
        t.losses += seat in result.losers
        t.place_sum += result.places[seat]
        t.score_sum += result.scores[seat]
        t.faults += faults[seat]
        t.retired += seat in outcome.retired
