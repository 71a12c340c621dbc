"""Who plays whom: round-robin or balanced tables, duplicate seating, game keys and seeds.

For every table size ``K`` the schedule is a list of tables (sets of ``K``
bots). A table plays ``deals`` deal seeds; each deal seed is played ``K``
times with the seats rotated (duplicate seating), so every bot at the table
plays every seat's cards once. A game is named by its :class:`GameKey`
``(size, table, deal, rotation)``; its seed and its seating follow from the
tournament seed and the key alone, so any game can be replayed by itself.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from ...game.engine import derive_seed
from ...game.seeds import GameSeeds, game_seeds

#: Beyond this many tables per table size the full round robin is replaced by a balanced schedule.
DEFAULT_MAX_TABLES = 2000
#: The most games a tournament schedules (days of play; the schedule alone would fill memory beyond it),
#: and the largest ``--games`` (deals per table) and ``--max-tables`` accepted.
MAX_GAMES, MAX_DEALS, MAX_TABLES = 10_000_000, 100_000, 100_000
MIN_SIZE, MAX_SIZE = 2, 6
#: The most deals one stream plays: a rotation of a table over more deals is cut into streams of
#: this many consecutive deals (deal // STREAM_DEALS), so a stream stored whole stays small.
STREAM_DEALS = 16


class GameKey(NamedTuple):
    """One game of a tournament. Tuple order is the canonical (rating) order."""

    size: int
    table: int
    deal: int
    rotation: int

    def __str__(self) -> str:
        return f"{self.size}p-t{self.table}-d{self.deal}-r{self.rotation}"

    @classmethod
    def parse(cls, text: str) -> GameKey:
        """``"4p-t12-d3-r1"`` -> ``GameKey(4, 12, 3, 1)``.

        :raises ValueError: not a game key.
        """
        try:
            size, table, deal, rotation = text.split("-")
            if not (size.endswith("p") and table[0] == "t" and deal[0] == "d" and rotation[0] == "r"):
                raise ValueError
            return cls(int(size[:-1]), int(table[1:]), int(deal[1:]), int(rotation[1:]))
        except (ValueError, IndexError):
            raise ValueError(f"{text!r} is not a game key like 4p-t12-d3-r1") from None


def stream_of(key: GameKey) -> tuple[int, int, int, int]:
    """The stream a game belongs to: its table's rotation over a run of deals
    ``(size, table, rotation, deal // STREAM_DEALS)``; no two games of one stream share a deal."""
    return (key.size, key.table, key.rotation, key.deal // STREAM_DEALS)


def streams(keys: Iterable[GameKey]) -> list[list[GameKey]]:
    """``keys`` as streams (docs/RULINGS.md 78): each the keys of one :func:`stream_of`, in
    deal order, the streams in the order their first key came. A stream's games are played
    one after another by one process per sandboxed bot, and stored together."""
    groups: dict[tuple[int, int, int, int], list[GameKey]] = {}
    for key in keys:
        groups.setdefault(stream_of(key), []).append(key)
    return [sorted(group, key=lambda k: k.deal) for group in groups.values()]


def stream_chunks(keys: Iterable[GameKey], size: int) -> list[list[GameKey]]:
    """Whole :func:`streams` of ``keys`` packed into chunks of about ``size`` games (a chunk
    is closed once it holds ``size`` or more): a worker never gets part of a stream."""
    chunks: list[list[GameKey]] = []
    chunk: list[GameKey] = []
    for stream in streams(keys):
        chunk.extend(stream)
        if len(chunk) >= size:
            chunks.append(chunk)
            chunk = []
    if chunk:
        chunks.append(chunk)
    return chunks


def parse_sizes(text: str) -> tuple[int, ...]:
    """``"2,4,6"``, ``"2-6"`` or ``"2-3,5"`` -> sorted distinct table sizes.

    :raises ValueError: not a list of sizes from 2 to 6.
    """
    sizes: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                sizes.update(range(lo, hi + 1))
            else:
                sizes.add(int(part))
        except ValueError:
            raise ValueError(f"--players takes table sizes like 4, 2,4,6 or 2-6, not {text!r}") from None
    bad = sorted(k for k in sizes if not MIN_SIZE <= k <= MAX_SIZE)
    if bad:
        raise ValueError(f"R2.1: 2 to 6 players sit at a table, not {bad[0]}")
    return tuple(sorted(sizes))


def default_sizes(bots: int) -> tuple[int, ...]:
    """4 players a table when there are enough bots, else all of them (2 to 6)."""
    return (max(MIN_SIZE, min(4, bots, MAX_SIZE)),)


@dataclass(frozen=True)
class SizeSchedule:
    """The tables of one table size."""

    size: int
    kind: str  # "round-robin" or "balanced"
    tables: tuple[tuple[int, ...], ...]

    def pair_counts(self, bots: int) -> dict[tuple[int, int], int]:
        """How many tables each pair of bots shares (every pair, zeros included)."""
        counts = {pair: 0 for pair in itertools.combinations(range(bots), 2)}
        for table in self.tables:
            for pair in itertools.combinations(sorted(table), 2):
                counts[pair] += 1
        return counts

    def seat_counts(self, bots: int) -> list[int]:
        """How many tables each bot sits at."""
        counts = [0] * bots
        for table in self.tables:
            for b in table:
                counts[b] += 1
        return counts

    def describe(self, bots: int) -> str:
        """One line for people: which schedule ran and how even it is."""
        n = len(self.tables)
        if self.kind == "round-robin":
            if n == 1:
                return f"{self.size} players: one table of all {bots} bots"
            return f"{self.size} players: round robin, all {n} tables of {self.size} of {bots} bots"
        if self.kind == "gauntlet":
            return (
                f"{self.size} players: gauntlet, {n} tables of the new bot and {self.size - 1} of the {bots - 1} others"
            )
        pairs = self.pair_counts(bots).values()
        seats = self.seat_counts(bots)
        return (
            f"{self.size} players: balanced schedule of {n} of {math.comb(bots, self.size)} possible tables; "
            f"each pair shares {spread(pairs)} tables, each bot sits at {spread(seats)}"
        )


def spread(values: Iterable[int]) -> str:
    """``"3"`` when all values are 3, else ``"2 to 4"``."""
    vals = list(values)
    lo, hi = min(vals), max(vals)
    return str(lo) if lo == hi else f"{lo} to {hi}"


def size_schedule(bots: int, size: int, *, max_tables: int = DEFAULT_MAX_TABLES, seed: int = 0) -> SizeSchedule:
    """Every combination of ``size`` of ``bots`` bots, or a balanced schedule when
    there are more than ``max_tables`` of them."""
    if size > bots:
        raise ValueError(f"a table of {size} needs at least {size} bots; {bots} given")
    if math.comb(bots, size) <= max_tables:
        return SizeSchedule(size, "round-robin", tuple(itertools.combinations(range(bots), size)))
    return SizeSchedule(size, "balanced", balanced_tables(bots, size, max_tables, seed=seed))


def _design_step(bots: int, size: int) -> int:
    """The fewest tables for which equal pair counts and equal seat counts are arithmetically possible."""
    step_pairs = bots * (bots - 1) // math.gcd(bots * (bots - 1), size * (size - 1))
    step_seats = bots // math.gcd(bots, size)
    return step_pairs * step_seats // math.gcd(step_pairs, step_seats)


def balanced_table_count(bots: int, size: int, max_tables: int) -> int:
    """The most tables, at most ``max_tables``, for which equal pair counts and equal
    seat counts are arithmetically possible; ``max_tables`` when none is."""
    step = _design_step(bots, size)
    return (max_tables // step) * step if step <= max_tables else max_tables


def balanced_tables(bots: int, size: int, max_tables: int, *, seed: int = 0) -> tuple[tuple[int, ...], ...]:
    """About ``max_tables`` tables of ``size`` in which every pair of bots meets as equally
    often as we can make it, and every bot sits equally often. Deterministic for a seed.

    When a small design (the fewest tables that can be balanced) comes out perfect,
    the schedule is copies of it under shuffled bot numbers; otherwise the whole
    schedule is improved at once. Either way: greedy start, then annealing.
    """
    rng = random.Random(derive_seed(seed, "balanced", bots, size))
    count = balanced_table_count(bots, size, max_tables)
    step = _design_step(bots, size)
    if step < count:
        base = _anneal(_greedy_tables(bots, size, step, rng), bots, size, rng)
        pairs = SizeSchedule(size, "balanced", base).pair_counts(bots).values()
        if len(set(pairs)) == 1:
            tables = list(base)
            for _ in range(count // step - 1):
                relabel = list(range(bots))
                rng.shuffle(relabel)
                tables.extend(tuple(sorted(relabel[b] for b in t)) for t in base)
            return tuple(tables)
    return _anneal(_greedy_tables(bots, size, count, rng), bots, size, rng)


def _greedy_tables(bots: int, size: int, count: int, rng: random.Random) -> list[list[int]]:
    """Each table takes the bot that has sat least, then the bots that have met its members least."""
    pairs = [[0] * bots for _ in range(bots)]
    seats = [0] * bots
    tables: list[list[int]] = []
    for _ in range(count):
        ties = [rng.random() for _ in range(bots)]
        table = [min(range(bots), key=lambda b: (seats[b], ties[b]))]
        while len(table) < size:
            table.append(
                min(
                    (b for b in range(bots) if b not in table),
                    key=lambda b: (sum(pairs[b][m] for m in table), seats[b], ties[b]),
                )
            )
        for i, a in enumerate(table):
            seats[a] += 1
            for b in table[i + 1 :]:
                pairs[a][b] += 1
                pairs[b][a] += 1
        tables.append(table)
    return tables


def _anneal(
    tables: list[list[int]],
    bots: int,
    size: int,
    rng: random.Random,
    *,
    temperature: float = 0.5,
    budget: int = 200_000,
) -> tuple[tuple[int, ...], ...]:
    """Swap a table member for an outsider to lower ``sum pair_count^2 + (K-1) sum seat_count^2``
    (the squared spread around the targets, since the totals never change); worse swaps
    are taken with a probability that falls to zero over the ``budget`` of tries."""
    pairs = [[0] * bots for _ in range(bots)]
    seats = [0] * bots
    for table in tables:
        for i, a in enumerate(table):
            seats[a] += 1
            for b in table[i + 1 :]:
                pairs[a][b] += 1
                pairs[b][a] += 1
    budget = min(budget, 100 * len(tables) * size)
    for it in range(budget):
        table = tables[rng.randrange(len(tables))]
        i = rng.randrange(size)
        out, cand = table[i], rng.randrange(bots)
        if cand in table:
            continue
        rest = [m for m in table if m != out]
        gain = sum(2 * (pairs[out][m] - pairs[cand][m]) - 2 for m in rest) + (size - 1) * (
            2 * (seats[out] - seats[cand]) - 2
        )
        temp = temperature * (1 - it / budget)
        if gain >= 0 or (temp > 0 and rng.random() < math.exp(gain / temp)):
            for m in rest:
                pairs[out][m] -= 1
                pairs[m][out] -= 1
                pairs[cand][m] += 1
                pairs[m][cand] += 1
            seats[out] -= 1
            seats[cand] += 1
            table[i] = cand
    return tuple(tuple(sorted(t)) for t in tables)


@dataclass(frozen=True)
class Schedule:
    """The whole tournament's schedule: per table size, its tables; ``deals`` per table."""

    bots: int
    seed: int
    deals: int
    sizes: tuple[SizeSchedule, ...]
    #: The teams variant: each team's two entrants (see :mod:`arena.tournament.results.teams`); () when bots play alone.
    teams: tuple[tuple[int, int], ...] = ()

    @classmethod
    def build(
        cls,
        bots: int,
        sizes: Sequence[int],
        *,
        deals: int,
        seed: int,
        max_tables: int = DEFAULT_MAX_TABLES,
        teams: Sequence[tuple[int, int]] = (),
    ) -> Schedule:
        """``teams``: tables of ``K`` seats are ``K/2`` whole teams, scheduled as entrants."""
        if teams:
            return cls(
                bots,
                seed,
                deals,
                tuple(team_schedule(teams, k, max_tables=max_tables, seed=seed) for k in sorted(set(sizes))),
                tuple(teams),
            )
        return cls(
            bots,
            seed,
            deals,
            tuple(size_schedule(bots, k, max_tables=max_tables, seed=seed) for k in sorted(set(sizes))),
        )

    def by_size(self, size: int) -> SizeSchedule:
        for s in self.sizes:
            if s.size == size:
                return s
        raise KeyError(size)

    @property
    def total_games(self) -> int:
        return sum(len(s.tables) * self.deals * s.size for s in self.sizes)

    def keys(self) -> Iterator[GameKey]:
        """Every game, in canonical order."""
        for s in self.sizes:
            for t in range(len(s.tables)):
                for d in range(self.deals):
                    for r in range(s.size):
                        yield GameKey(s.size, t, d, r)

    def index(self, key: GameKey) -> int:
        """The position of ``key`` in :meth:`keys` (the game's number in the database, less 1)."""
        offset = 0
        for s in self.sizes:
            if s.size == key.size:
                return offset + (key.table * self.deals + key.deal) * s.size + key.rotation
            offset += len(s.tables) * self.deals * s.size
        raise KeyError(key)

    def seeds(self, key: GameKey) -> GameSeeds:
        """The game's deal seed, the same for every rotation of one deal (duplicate seating), and
        the key its seats' bot seeds derive from, every game its own: keyed by the tournament seed
        in separate domains (:func:`~arena.game.seeds.game_seeds`), so a bot's ``random`` tells
        nothing about any deal."""
        where = (key.size, key.table, key.deal)
        made = game_seeds(self.seed, "tournament", where, (*where, key.rotation))
        return GameSeeds(made.deal >> 1, made.bot_key)  # the deal seed fits an SQLite INTEGER

    def game_seed(self, key: GameKey) -> int:
        """The deal seed (:meth:`seeds`)."""
        return self.seeds(key).deal

    def bot_key(self, key: GameKey) -> int:
        """The bot key (:meth:`seeds`)."""
        return self.seeds(key).bot_key

    def deal_order(self, key: GameKey) -> tuple[int, ...]:
        """The table's bots in the cyclic order used for this deal (shuffled per deal,
        so who sits after whom varies too)."""
        table = list(self.by_size(key.size).tables[key.table])
        rng = random.Random(derive_seed(self.seed, "order", key.size, key.table, key.deal))
        if self.teams:  # the teams in shuffled order, first members then second members: partners K/2 apart
            pairs = [t for t in self.teams if t[0] in table]
            rng.shuffle(pairs)
            return tuple(a for a, _ in pairs) + tuple(b for _, b in pairs)
        rng.shuffle(table)
        return tuple(table)

    def seating(self, key: GameKey) -> tuple[int, ...]:
        """Bot index at each seat: seat ``s`` holds ``order[(s + rotation) % K]``, so over
        the ``K`` rotations every bot sits at every seat (and gets its cards) once. With
        teams, ``order`` puts partners ``K/2`` apart, so they sit opposite in every rotation
        and each team's first member sits at every seat once (docs/RULINGS.md, ruling 76)."""
        order = self.deal_order(key)
        k = key.size
        return tuple(order[(s + key.rotation) % k] for s in range(k))


def team_schedule(
    teams: Sequence[tuple[int, int]], size: int, *, max_tables: int = DEFAULT_MAX_TABLES, seed: int = 0
) -> SizeSchedule:
    """The tables of ``size`` seats of a teams tournament: the schedule of ``size/2`` of the
    teams (round robin or balanced, teams as entrants), each table as its members' entrants."""
    of_teams = size_schedule(len(teams), size // 2, max_tables=max_tables, seed=seed)
    return SizeSchedule(
        size, of_teams.kind, tuple(tuple(sorted(m for t in table for m in teams[t])) for table in of_teams.tables)
    )


def gauntlet_schedule(field_size: int, size: int, max_tables: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """Tables of bot 0 (the new bot) and ``size - 1`` of the field (bots 1..``field_size``):
    every combination, or a balanced choice when there are more than ``max_tables``."""
    if size - 1 > field_size:
        raise ValueError(f"a table of {size} needs a field of at least {size - 1} bots; {field_size} given")
    if size == 2:
        return tuple((0, f) for f in range(1, field_size + 1))
    inner = size_schedule(field_size, size - 1, max_tables=max_tables, seed=seed)
    return tuple((0, *(b + 1 for b in t)) for t in inner.tables)


def with_tables(schedule: Schedule, tables: tuple[tuple[int, ...], ...], kind: str) -> Schedule:
    """``schedule`` with its (single) table size's tables replaced."""
    (only,) = schedule.sizes
    return replace(schedule, sizes=(SizeSchedule(only.size, kind, tables),))
