"""The Python API: run matches from code or a notebook, and ask a bot for its move on a
position set up in code (docs/python-api.md).

    >>> import arena
    >>> result = arena.play(["greedy", "random"], games=10, seed=1)
    >>> [row.bot for row in result.standings]
    ['greedy', 'random']

``arena play`` runs the same :func:`~arena.playing.match.run_match` underneath.
"""

from __future__ import annotations

from collections.abc import Sequence

from .game.rules import CONTEST, Rules
from .playing.match import MatchHooks, MatchResult, MatchSettings, run_match
from .playing.positions import Answer, Position, ask, position
from .sandbox.limits import Limits

__all__ = ["play", "position", "ask", "Position", "Answer", "MatchResult"]


def play(
    bots: Sequence[str],
    *,
    games: int = 100,
    seed: int | None = None,
    rules: Rules = CONTEST,
    limits: Limits | None = None,
    trusted: bool = False,
    record_file: str | None = None,
    force: bool = False,
    keep_records: bool = True,
) -> MatchResult:
    """Play ``games`` games between ``bots`` (registered names like ``"greedy"`` or bot files),
    seats rotating. Bot files run sandboxed unless ``trusted``. The result holds the standings
    (one :class:`~arena.playing.match.StandingsRow` per bot, in the order given) and, unless
    ``keep_records`` is False, every game's record (its events, docs/record-format.md).
    ``record_file`` also writes them to a file (an existing one only with ``force``).

    :raises BotLoadError: a bot that cannot be found or loaded.
    :raises UsageError: a record file that cannot be written (or exists, without ``force``).
    :raises ValueError: a table size the rules do not allow.
    """
    rules.check_players(len(bots))
    if "human" in bots:
        raise ValueError("arena.play seats bots only; `arena play human ...` seats a person")
    settings = MatchSettings(
        bots=tuple(bots),
        games=games,
        seed=seed,
        rules=rules,
        limits=limits,
        trusted=trusted,
        record_file=record_file,
        force=force,
        keep_records=keep_records,
    )
    return run_match(settings, MatchHooks())
