"""The ladder: a matchmaker that chooses tables, and a player of duplicate blocks.

The matchmaker picks a *focus* version, weighted by what its games would teach (uncertain and
close ratings: :func:`.pace.pick`) and towards the new, then seats beside it versions drawn by
what a game with it would teach, at a table of 2 to 6. A table plays a
*duplicate block*: one deal per seat rotation, so each version plays every seat's cards.
Each finished game is stored (with each seat's own output, for its author) and rated in one
transaction under its key ``b{block}-r{rotation}`` (:func:`arena.server.store.database.record_game`);
a worker killed mid-block leaves the block's finished games and no other. A version sits at a
table as its author numbers it (``annbot v2``: :func:`arena.server.store.versions.player`).

A block belongs to the round that was current when it was made, and plays under that round's
rules; from round two on, its table is a gauntlet (:func:`arena.server.contest.rounds.pick_gauntlet`).
A worker's :class:`.pace.Gate` says when a block may start (paused, the disk budget, the pace).
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import BotLoadError
from ...game.rules import Rules
from ...game.seeds import LADDER, GameSeeds, game_seeds
from ...seats.contract import SeatFactory
from ...seats.factories import make_factory
from ...seats.loader import resolve_bot
from ...seats.seating import Chair, Seating
from ...trust.text import storable
from ..contest import rounds
from ..contest.building import NotReady, playable
from ..contest.uploads import stored_bot
from ..store import builds, versions
from ..store import database as store
from . import pace

MIN_TABLE, MAX_TABLE = 2, 6


@dataclass(frozen=True)
class LadderEntrant:
    submission: int
    bot: str
    mu: float
    sigma: float
    games: int
    house: bool = False  # the organiser's own AI (:mod:`..contest.house`)


def pick_table(entrants: Sequence[LadderEntrant], rng: random.Random, largest: int = MAX_TABLE) -> list[int]:
    """The submissions of the next table: a focus and its rivals, chosen by what their games would
    teach. The focus is an author's bot: house bots meet authors' bots, never only each other."""
    if len(entrants) < MIN_TABLE or all(e.house for e in entrants):
        return []
    size = rng.randint(MIN_TABLE, min(largest, MAX_TABLE, len(entrants)))
    table = [e.submission for e in pace.pick(entrants, rng, size, lambda e: not e.house)]
    rng.shuffle(table)
    return table


@dataclass(frozen=True)
class Block:
    """One table's duplicate block, as a player needs it (it pickles: a Ray task's argument)."""

    id: int
    table: tuple[int, ...]
    #: submission -> (bot name, the stored bytes: a Python bot's text or a program's bundle)
    bots: dict[int, tuple[str, bytes]]
    seeds: GameSeeds  # one deal for every rotation, and its bot key
    rules: Rules  # the rules of the round the block belongs to
    #: submission -> its name at the table, ``annbot v2`` (:func:`..store.versions.player`)
    labels: dict[int, str] = field(default_factory=dict)
    #: Registered house bots: played by arena's installed code of that name, never by stored bytes.
    registered: frozenset[int] = frozenset()
    #: submission -> a program's built files, from the build cache (:func:`..contest.building.playable`)
    built: dict[int, tuple[tuple[str, bytes], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LadderGame:
    """One finished game of a block, as :func:`arena.server.store.database.record_game` stores it."""

    key: str
    block: int
    rotation: int
    seating: list[int]
    places: list[int]
    scores: list[int]
    faults: list[tuple[int, str, str, int]]
    log: list[dict[str, Any]]
    #: Each seat's own output, for its author (:mod:`..store.outputs`).
    outputs: list[str] = field(default_factory=list)


class BlockPlayer:
    """Plays blocks, with no database: keeps each version's sandboxed factory, and its streams,
    for the next block (a :class:`~arena.seats.seating.Seating`: a version's n-th stream serves the
    n-th rotation of each block, one game a block, as a tournament's stream serves one rotation of
    a table over its deals: never the same deal twice). One per ladder worker, or per Ray worker."""

    def __init__(self, limits: Any = None, keep: int = 12, keep_streams: int = 24) -> None:
        self.limits = limits
        #: The block being played: where a version's factory is made from (its stored bytes).
        self.block: Block | None = None
        self.seating = Seating(self._make, keep=keep, keep_streams=keep_streams)

    def _make(self, sid: int) -> SeatFactory:
        if self.block is None:
            raise RuntimeError("a version's factory is made while its block plays")
        bot, source = self.block.bots[sid]
        if sid in self.block.registered:  # arena's own bot, by its name (the organiser's command)
            return make_factory(resolve_bot(bot), trusted=True, limits=self.limits)
        src = replace(stored_bot(bot, source), built=self.block.built.get(sid))  # built by the queue, never here
        return make_factory(src, trusted=False, limits=self.limits)  # uploaded code: always sandboxed

    def play(self, block: Block) -> Iterator[LadderGame]:
        """The block's games, one per seat rotation, each as it ends."""
        self.block = block
        n = len(block.table)
        for rotation in range(n):
            seating = [block.table[(s + rotation) % n] for s in range(n)]
            labels = [block.labels.get(sid) or block.bots[sid][0] for sid in seating]
            key = f"b{block.id}-r{rotation}"
            chairs = [Chair(sid, label, label) for sid, label in zip(seating, labels, strict=True)]
            outcome = self.seating.play(chairs, block.seeds, key, streams=True, rules=block.rules)
            faults = [(f.seat, f.kind.value, storable(f.detail), f.round) for f in outcome.faults]
            result = outcome.result
            places, scores = list(result.places), list(result.scores)
            yield LadderGame(key, block.id, rotation, seating, places, scores, faults, outcome.log, outcome.outputs)

    def close(self) -> None:
        self.seating.close()


class LadderPlayer:
    """The ladder of one worker process: chooses tables, plays their blocks here (or hands them
    to Ray: :mod:`.ray_tasks`) and stores each game as it ends."""

    def __init__(
        self,
        db: sqlite3.Connection,
        limits: Any = None,
        keep: int = 12,
        keep_streams: int = 24,
        gate: pace.Gate | None = None,
    ) -> None:
        self.db = db
        self.seed = int(store.setting(db, "seed") or 0)
        self.runner = BlockPlayer(limits, keep, keep_streams)
        #: Versions' built files, read from the build cache (None: a version with no build).
        self.built: dict[int, tuple[tuple[str, bytes], ...] | None] = {}
        self.gate = gate  # None: no pause, pace or budget (a test's ladder)

    def next_block(self, rng: random.Random) -> Block | None:
        """Choose a table and open its block, in the current round (round two: the gauntlet); None
        when nothing can play, or the next round opened meanwhile, or the gate is shut (paused,
        the disk budget reached, or not yet time: the pace)."""
        if self.gate is not None and not self.gate.open():
            return None
        try:
            current, found = rounds.entrants(self.db)
        except store.ContestError:  # a damaged round in the database: nothing to play (the pages say why)
            return None
        waiting = builds.unready(self.db, [int(r["id"]) for r in found])  # a build not done: skipped till it is
        builds.wake(self.db, waiting)  # ... and one let go of is built again
        rows = {int(r["id"]): r for r in found if int(r["id"]) not in waiting}
        entrants = [
            LadderEntrant(sid, r["bot"], r["mu"], r["sigma"], r["games"], r["house"] is not None)
            for sid, r in rows.items()
        ]
        if current.number == 1:
            table = pick_table(entrants, rng)
        else:  # the gauntlet: a new submission against the field (and the house bots)
            field = set(current.field) | {e.submission for e in entrants if e.house}
            new = [e for e in entrants if e.submission not in field]
            table = rounds.pick_gauntlet(new, [e for e in entrants if e.submission in field], rng, current.sizes)
        bots = {sid: (str(rows[sid]["bot"]), store.source_bytes(rows[sid]["source"])) for sid in table}
        try:
            built = self._built(bots)
        except NotReady:  # a cached build found damaged: built again, the table chosen again meanwhile
            return None
        block = store.new_block(self.db, table, current.number) if table else 0
        if not block:
            return None
        if self.gate is not None:
            self.gate.started([e for e in entrants if e.submission in table], len(entrants))
        labels = {sid: versions.player(str(rows[sid]["bot"]), rows[sid]["version"]) for sid in table}
        seeds = game_seeds(self.seed, LADDER, (block,), (block,))
        registered = frozenset(sid for sid in table if rows[sid]["house"] == "registered")
        return Block(block, tuple(table), bots, seeds, current.rules, labels, registered, built)

    def _built(self, bots: dict[int, tuple[str, bytes]]) -> dict[int, tuple[tuple[str, bytes], ...]]:
        """The built files of the programs among ``bots``, from the cache (read back checked once
        per version in this process). :raises NotReady: one was missing or damaged."""
        out = {}
        for sid, (bot, source) in bots.items():
            if sid not in self.built:
                try:
                    self.built[sid] = playable(self.db, sid, bot, source).built
                except BotLoadError:  # not a bot: it plays as the crash it is
                    self.built[sid] = None
                while len(self.built) > 64:
                    del self.built[next(iter(self.built))]
            found = self.built[sid]
            if found is not None:
                out[sid] = found
        return out

    def store(self, game: LadderGame) -> bool:
        """Store and rate one game (False: its key is stored already)."""
        g = game
        return store.record_game(
            self.db, g.key, g.block, g.rotation, g.seating, g.places, g.scores, g.faults, g.log, g.outputs
        )

    def play_block(self, rng: random.Random) -> int:
        """Choose a table and play its block here; returns the games stored (0: nothing to play)."""
        block = self.next_block(rng)
        if block is None:
            return 0
        try:
            return sum(self.store(game) for game in self.runner.play(block))
        finally:
            if self.gate is not None:
                self.gate.ended()

    def close(self) -> None:
        self.runner.close()
