"""The ladder: a matchmaker that chooses tables, and a player of duplicate blocks.

The matchmaker (as Halite's seeded matchmaking does) picks a *focus* version, weighted
towards the new (few games) and the uncertain (high sigma), then seats beside it the
versions nearest to it in rating, with some noise, at a table of 2 to 6. A table plays a
*duplicate block*: one deal per seat rotation, so each version plays every seat's cards.
Each finished game is stored and rated in one transaction under its key
``b{block}-r{rotation}`` (:func:`.store.record_game`); a worker killed mid-block leaves the
block's finished games and no other.

A block belongs to the round that was current when it was made, and plays under that round's
rules; from round two on, its table is a gauntlet (:func:`.rounds.pick_gauntlet`).
"""

from __future__ import annotations

import random
import sqlite3
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import BotLoadError
from ...game.referee import BotFault, Referee
from ...game.rules import Rules
from ...game.seeds import derive_seed
from ...seats.factories import make_factory
from ...tournament.backends.games import CrashedPlayer
from ...trust.text import storable
from ..contest import rounds
from ..contest.uploads import stored_bot
from ..store import database as store

MIN_TABLE, MAX_TABLE = 2, 6


@dataclass(frozen=True)
class Entrant:
    submission: int
    bot: str
    mu: float
    sigma: float
    games: int


def pick_table(entrants: Sequence[Entrant], rng: random.Random, largest: int = MAX_TABLE) -> list[int]:
    """The submissions of the next table: a focus weighted to the new and uncertain, and its nearest rivals."""
    if len(entrants) < MIN_TABLE:
        return []
    weights = [e.sigma * (1.0 + 4.0 / (1 + e.games)) for e in entrants]
    focus = rng.choices(list(entrants), weights=weights)[0]
    size = rng.randint(MIN_TABLE, min(largest, MAX_TABLE, len(entrants)))
    spread = max(focus.sigma, 1.0)
    others = sorted(
        (e for e in entrants if e.submission != focus.submission),
        key=lambda e: abs(e.mu - focus.mu) + abs(rng.gauss(0.0, spread)),
    )
    table = [focus.submission] + [e.submission for e in others[: size - 1]]
    rng.shuffle(table)
    return table


@dataclass(frozen=True)
class Block:
    """One table's duplicate block, as a player needs it (it pickles: a Ray task's argument)."""

    id: int
    table: tuple[int, ...]
    #: submission -> (bot name, the stored bytes: a Python bot's text or a program's bundle)
    bots: dict[int, tuple[str, bytes]]
    deal: int
    bot_key: int
    rules: Rules  # the rules of the round the block belongs to


@dataclass(frozen=True)
class Game:
    """One finished game of a block, as :func:`.store.record_game` stores it."""

    key: str
    block: int
    rotation: int
    seating: list[int]
    places: list[int]
    scores: list[int]
    faults: list[tuple[int, str, str, int]]
    log: list[dict[str, Any]]


class BlockPlayer:
    """Plays blocks, with no database: keeps each version's sandboxed factory, and its streams
    (one per rotation slot), for the next block. One per ladder worker, or per Ray worker."""

    def __init__(self, limits: Any = None, keep: int = 12, keep_streams: int = 24) -> None:
        self.limits = limits
        self.keep = keep
        self.keep_streams = keep_streams
        self._referees: dict[Rules, Referee] = {}  # one per round's rules
        self._factories: OrderedDict[int, Any] = OrderedDict()
        #: (submission, rotation) -> a :class:`~arena.sandbox.python.factory.Stream` kept across blocks.
        self._streams: OrderedDict[tuple[int, int], Any] = OrderedDict()

    def _factory(self, sid: int, bot: str, source: bytes) -> Any:
        if sid in self._factories:
            self._factories.move_to_end(sid)
            return self._factories[sid]
        try:  # uploaded code: always sandboxed, never trusted
            factory: Any = make_factory(stored_bot(bot, source), trusted=False, limits=self.limits)
        except BotLoadError as exc:
            factory = exc
        self._factories[sid] = factory
        while len(self._factories) > self.keep:
            old_sid, old = self._factories.popitem(last=False)
            self._close_streams(old_sid)
            if callable(getattr(old, "close", None)):
                old.close()
        return factory

    def _close_streams(self, sid: int | None = None) -> None:
        for slot in [s for s in self._streams if sid is None or s[0] == sid]:
            self._streams.pop(slot).close()

    def _player(self, sid: int, bot: tuple[str, bytes], rotation: int, bot_key: int, seat: int, deal: int) -> Any:
        """The seat of ``sid`` in this game: its stream for this rotation slot when its factory has
        streams (one process serving one game per block, as a tournament's stream serves one
        rotation of a table over its deals: never the same deal twice), else a fresh process."""
        label = f"{bot[0]}#v{sid}"
        f = self._factory(sid, *bot)
        if isinstance(f, BotLoadError):
            return CrashedPlayer(label, str(f))
        try:
            if not hasattr(f, "stream"):
                return f(bot_key, seat)
            slot = (sid, rotation)
            stream = self._streams.get(slot)
            if stream is None:
                stream = self._streams[slot] = f.stream()
                while len(self._streams) > self.keep_streams:
                    self._streams.popitem(last=False)[1].close()
            self._streams.move_to_end(slot)
            try:
                return stream(bot_key, seat, deal=deal)
            except ValueError:  # a deal this stream saw (never, block ids are unique): a fresh process
                return f(bot_key, seat)
        except (BotLoadError, BotFault) as exc:
            return CrashedPlayer(label, str(exc))

    def play(self, block: Block) -> Iterator[Game]:
        """The block's games, one per seat rotation, each as it ends."""
        referee = self._referees.setdefault(block.rules, Referee(block.rules))
        n = len(block.table)
        for rotation in range(n):
            seating = [block.table[(s + rotation) % n] for s in range(n)]
            labels = [f"{block.bots[sid][0]}#v{sid}" for sid in seating]
            players = []
            try:
                for seat, sid in enumerate(seating):
                    p = self._player(sid, block.bots[sid], rotation, block.bot_key, seat, block.deal)
                    p.name = labels[seat]
                    players.append(p)
                key = f"b{block.id}-r{rotation}"
                outcome = referee.play(players, seed=block.deal, game_id=key, bots=labels)
            finally:
                for p in players:
                    p.close()
            faults = [(f.seat, f.kind.value, storable(f.detail), f.round) for f in outcome.faults]
            result = outcome.result
            yield Game(key, block.id, rotation, seating, list(result.places), list(result.scores), faults, outcome.log)

    def close(self) -> None:
        self._close_streams()
        factories, self._factories = self._factories, OrderedDict()
        for f in factories.values():
            if callable(getattr(f, "close", None)):
                f.close()


class LadderPlayer:
    """The ladder of one worker process: chooses tables, plays their blocks here (or hands them
    to Ray: :mod:`.rayladder`) and stores each game as it ends."""

    def __init__(self, db: sqlite3.Connection, limits: Any = None, keep: int = 12, keep_streams: int = 24) -> None:
        self.db = db
        self.seed = int(store.setting(db, "seed") or 0)
        self.runner = BlockPlayer(limits, keep, keep_streams)

    def next_block(self, rng: random.Random) -> Block | None:
        """Choose a table and open its block, in the current round (round two: the gauntlet); None
        when nothing can play, or the next round opened meanwhile."""
        try:
            current, found = rounds.entrants(self.db)
        except store.ContestError:  # a damaged round in the database: nothing to play (the pages say why)
            return None
        rows = {int(r["id"]): r for r in found}
        entrants = [Entrant(sid, r["bot"], r["mu"], r["sigma"], r["games"]) for sid, r in rows.items()]
        if current.number == 1:
            table = pick_table(entrants, rng)
        else:  # the gauntlet: a new submission against the field
            field = set(current.field)
            new = [e for e in entrants if e.submission not in field]
            table = rounds.pick_gauntlet(new, [e for e in entrants if e.submission in field], rng, current.sizes)
        block = store.new_block(self.db, table, current.number) if table else 0
        if not block:
            return None
        return Block(
            block,
            tuple(table),
            {sid: (str(rows[sid]["bot"]), store.source_bytes(rows[sid]["source"])) for sid in table},
            derive_seed(self.seed, "ladder-deal", block),
            derive_seed(self.seed, "ladder-bots", block),
            current.rules,
        )

    def store(self, game: Game) -> bool:
        """Store and rate one game (False: its key is stored already)."""
        g = game
        return store.record_game(self.db, g.key, g.block, g.rotation, g.seating, g.places, g.scores, g.faults, g.log)

    def play_block(self, rng: random.Random) -> int:
        """Choose a table and play its block here; returns the games stored (0: nothing to play)."""
        block = self.next_block(rng)
        if block is None:
            return 0
        return sum(self.store(game) for game in self.runner.play(block))

    def close(self) -> None:
        self.runner.close()
