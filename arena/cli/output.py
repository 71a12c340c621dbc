"""What commands show: results in the chosen format, progress bars, notices, the seed notice,
how a match ends (results, faults, exit status) and the interrupted-run message."""

from __future__ import annotations

import shlex
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..playing.interrupts import exit_status, signal_word
from ..trust.text import escape

if TYPE_CHECKING:
    from ..game.referee import GameOutcome
    from ..playing.match import MatchResult


def to_stderr(line: str) -> None:
    """A notice for the user (a warning, how a run ended): one line on stderr."""
    print(line, file=sys.stderr)


def show_seed(seed: int, what: str) -> None:
    """After a run with a fresh secret seed: the seed, on stderr, to reproduce the run."""
    print(f"seed {seed} (--seed {seed} {what})", file=sys.stderr)


def check_format(fmt: str) -> None:
    """Refuse a results format no reporter prints (before any game is played)."""
    from ..plugins import reporters

    found = reporters()
    if fmt not in found:
        raise UsageError(f"unknown format {fmt!r}; known: {', '.join(sorted(found))}")


def emit_results(doc: dict[str, Any], fmt: str) -> None:
    from ..plugins import reporters

    check_format(fmt)
    print(reporters()[fmt](doc))


def progress_bar(total: int, *, initial: int = 0, **options: Any) -> Any:
    """A tqdm bar on stderr (the caller decides whether stderr is a terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="game", file=sys.stderr, **options)


class MatchDisplay:
    """What ``arena play`` shows while games run: each game's text (``--verbose``), or a
    progress bar on a terminal (not for one game, a human seat or ``--quiet``). ``status``,
    when given, is shown beside the bar after each game (``--sprt``: the LLR)."""

    def __init__(
        self,
        games: int,
        *,
        verbose: bool = False,
        progress: bool = True,
        status: Callable[[], str] | None = None,
    ) -> None:
        self.verbose = verbose
        self.status = status
        self.bar: Any = None
        if progress and sys.stderr.isatty() and games > 1 and not verbose:
            self.bar = progress_bar(games, leave=False)

    def game(self, outcome: GameOutcome) -> None:
        """One game played, recorded and tallied."""
        if self.verbose:
            from ..records.files import format_game

            for line in format_game(outcome.log):
                print(line)
            print()
        if self.bar is not None:
            if self.status is not None:
                self.bar.set_postfix_str(self.status(), refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def fault_lines(result: MatchResult, *, verbose: bool) -> list[str]:
    """One line per entrant that faulted: how many faults, and the first one."""
    hint = "" if verbose else " (see --verbose)"
    return [
        f"arena: {escape(f.bot, 80)}: {f.count} fault{'s' if f.count != 1 else ''}, first: "
        f"{escape(f.kind, 40)}: {escape(f.detail, 300)} in game {escape(f.game, 40)}{hint}"
        for f in result.first_faults
    ]


def finish_play(
    result: MatchResult,
    fmt: str,
    *,
    verbose: bool = False,
    annotate: Callable[[dict[str, Any]], None] | None = None,
    after: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """How a ``play`` run ends: its results in ``fmt`` (none when stopped before a game
    ended), a line per bot that faulted, then a fresh secret seed; the exit status (130/143
    when interrupted). ``annotate`` adds to the document before it is printed, ``after``
    prints below it."""
    status = exit_status(signum=result.stopped_by)
    if result.interrupted and not result.games:
        return status
    doc = result.to_doc()
    if annotate is not None:
        annotate(doc)
    emit_results(doc, fmt)
    if after is not None:
        after(doc)
    for line in fault_lines(result, verbose=verbose):
        print(line, file=sys.stderr)
    if result.secret_seed and fmt != "json":  # the JSON document holds the seed
        show_seed(result.seed, "plays these games again")
    return status if result.interrupted else 0


def resume_hint(signum: int | None, stored: str, db: str) -> str:
    """What an interrupted tournament says: what is stored, and how to resume."""
    word = signal_word(signal.SIGINT if signum is None else signum)
    command = shlex.join(["arena", *sys.argv[1:]]) if sys.argv[1:2] == ["tournament"] else "the same command"
    return (
        f"arena: {word}: {stored} stored in {db}. Resume with:\n"
        f"  {command}\n(`arena standings --db {shlex.quote(db)}` shows the standings so far)"
    )
