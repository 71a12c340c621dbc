"""Seeds: the keyed derivation every seed comes from, fresh secret master seeds, guessable ones.

Every deal seed and every bot's ``random`` seed is an output of
:func:`derive_seed`, an HMAC-SHA256 keyed by the secret it derives from (the
master seed of a ``play``, ``tournament`` or ``check`` run, or a game's deal
seed), with the purpose as the first part of the message (domain
separation). Outputs of a keyed hash tell nothing about the key or about
other outputs: a bot that recovers its own seed from its ``random`` state
learns neither the master seed nor any deal.

That holds only while the master seed is secret. A run without ``--seed``
draws one (:func:`fresh_seed`, 128 random bits from :mod:`secrets`) and
shows it only after the run; a ``--seed`` below :data:`GUESSABLE_BELOW`
(the docs' 7 and 2026, any seed a person would type) is allowed for
reproducibility, but a bot can search for it, so it is warned about
(:func:`guessable_warning`) when sandboxed bots play.

Domains in use: ``deal``, ``bots`` (keyed by the master seed: a game's deal
seed and the key its seats' bot seeds come from, both made by :func:`game_seeds`,
the one place every run takes them from; the ladder's blocks name theirs
``ladder-deal`` and ``ladder-bots``), ``bot`` (a seat's seed,
keyed by the game's bot key), ``round`` and ``fallback`` (keyed by a deal
seed: each round's shuffle and the fallback's random choices), ``order`` and
``balanced`` (a tournament's seating orders and balanced schedule).

A game derives one seed per round from the same key: :class:`SeedKey` sets
the key up once and derives each seed from a copy (the same output as
:func:`derive_seed`). :func:`shuffle` is the deal's shuffle, draw for draw
``random.Random.shuffle``, as a plain loop.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from typing import Any, NamedTuple

#: Random bits in a fresh master seed.
SECRET_BITS = 128
#: Seeds with a smaller magnitude count as guessable. A fresh seed is
#: ``GUESSABLE_BELOW + secrets.randbits(SECRET_BITS)``, so it never is.
GUESSABLE_BELOW: int = 2**SECRET_BITS


def _key(key: Any) -> bytes:
    return str(key).encode("utf-8", "surrogatepass")


#: What ``json.dumps(parts, separators=(",", ":"), default=str)`` runs, built once
#: (``json.dumps`` with any option builds this encoder on every call).
_ENCODE = json.JSONEncoder(separators=(",", ":"), default=str).encode


def _message(parts: tuple[Any, ...]) -> bytes:
    """The HMAC message for ``parts``: their compact JSON text (the domain first)."""
    # Kept only for parts of plain text and whole numbers (bool, float and int subclasses
    # excluded: True == 1 == 1.0 as keys, but their JSON differs).
    plain = True
    for p in parts:  # a plain loop: all() over a generator costs more than the cache saves
        if type(p) is not str and type(p) is not int:
            plain = False
    if plain:
        message = _MESSAGES.get(parts)
        if message is not None:
            return message
    message = _ENCODE(parts).encode("utf-8", "surrogatepass")
    if plain and len(_MESSAGES) < _MESSAGES_KEPT:
        _MESSAGES[parts] = message
    return message


#: Messages made so far, by their parts: a game derives the same few, ``("round", 1)``,
#: ``("bot", 0)``..., game after game.
_MESSAGES: dict[tuple[Any, ...], bytes] = {}
_MESSAGES_KEPT = 4096


def derive_seed(key: Any, *parts: Any) -> int:
    """A 64-bit seed: HMAC-SHA256 keyed by ``key`` (its text) over ``parts``
    (JSON, the domain first). Not invertible, and without ``key`` not predictable."""
    import hmac  # noqa: PLC0415 - here, not at the top: a sandbox template holds no hashing modules

    digest: bytes = hmac.digest(_key(key), _message(parts), "sha256")
    return int.from_bytes(digest[:8], "big")


class SeedKey:
    """:func:`derive_seed` for one ``key``, many times: ``SeedKey(k).derive(*parts)`` is
    ``derive_seed(k, *parts)``. The key's HMAC state is made once and copied per seed
    (a game derives one seed per round from its deal seed)."""

    __slots__ = ("_mac",)

    def __init__(self, key: Any) -> None:
        import hmac  # noqa: PLC0415 - see derive_seed

        self._mac = hmac.new(_key(key), digestmod="sha256")

    def derive(self, *parts: Any) -> int:
        """The seed for ``parts`` under this key."""
        mac = self._mac.copy()
        mac.update(_message(parts))
        return int.from_bytes(mac.digest()[:8], "big")


@functools.lru_cache(maxsize=8)
def _seed_key(text: str) -> SeedKey:
    return SeedKey(text)


def seed_key(key: Any) -> SeedKey:
    """The :class:`SeedKey` of ``key``, kept for the next call with the same key (the few last
    keys): a match derives two seeds a game from its master seed, and a game's seats theirs
    from one bot key."""
    return _seed_key(str(key))


class GameSeeds(NamedTuple):
    """A game's deal seed (the cards, the fallback's choices) and its bot key (what its seats'
    bot seeds derive from, in the ``bot`` domain): made by :func:`game_seeds` only."""

    deal: int
    bot_key: int


#: The run whose blocks keep their own pair of domains (``ladder-deal``, ``ladder-bots``, the
#: server's since its first release): a contest's blocks play the deals they always did.
LADDER = "ladder"


def game_seeds(master: Any, run: str, deal: tuple[Any, ...], bots: tuple[Any, ...]) -> GameSeeds:
    """Game's (deal seed, bot key), keyed by the ``master`` seed in separate domains:
    ``derive_seed(master, "deal", run, *deal)`` and ``derive_seed(master, "bots", run, *bots)``
    (``run``: ``play``, ``sprt``, ``check``, ``tournament``, ``table``; :data:`LADDER`: the
    ladder's own pair). Neither tells anything about the other or about ``master``; ``deal``
    and ``bots`` name the game within the run (games of one deal share ``deal``)."""
    key = seed_key(master)  # the master seed's MAC made once a run (the last few kept)
    if run == LADDER:
        return GameSeeds(key.derive("ladder-deal", *deal), key.derive("ladder-bots", *bots))
    return GameSeeds(key.derive("deal", run, *deal), key.derive("bots", run, *bots))


def shuffle(rng: random.Random, items: list[Any]) -> None:
    """Shuffle ``items`` in place exactly as ``rng.shuffle(items)`` does, draw for draw.

    The stdlib's walk from the end, with ``Random._randbelow`` written out: a
    number of the fewest bits that can hold ``i + 1``, drawn again while too
    large. One call instead of one per card (the deal and every reshuffle run
    it); tests/game/test_seeds.py checks it against ``random.Random.shuffle``.
    """
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]


def fresh_seed() -> int:
    """A new secret master seed: 128 random bits (above :data:`GUESSABLE_BELOW`)."""
    import secrets  # noqa: PLC0415 - see derive_seed

    return GUESSABLE_BELOW + secrets.randbits(SECRET_BITS)


def guessable(seed: Any) -> bool:
    """Whether a bot could find ``seed`` by search (a small number, or not a number)."""
    return not isinstance(seed, int) or abs(seed) < GUESSABLE_BELOW


def guessable_warning(seed: Any) -> str:
    """The one-line warning for a guessable ``--seed`` given while sandboxed bots play."""
    return (
        f"arena: warning: --seed {seed} is guessable (below 2**{SECRET_BITS}): a sandboxed bot can search "
        "for it and compute every deal; leave out --seed for a secret seed (shown after the run)"
    )


def warn_if_guessable(seed: Any, *, untrusted: bool, notice: Callable[[str], None] | None = None) -> bool:
    """Whether ``seed`` is guessable while ``untrusted`` bots play (trusted ones run in the
    referee's process and could read the seed anyway); if so, :func:`guessable_warning`
    goes to ``notice`` (the CLI's stderr). The library itself prints nothing."""
    if untrusted and guessable(seed):
        if notice is not None:
            notice(guessable_warning(seed))
        return True
    return False


__all__ = [
    "GUESSABLE_BELOW",
    "LADDER",
    "SECRET_BITS",
    "GameSeeds",
    "SeedKey",
    "derive_seed",
    "game_seeds",
    "fresh_seed",
    "guessable",
    "guessable_warning",
    "shuffle",
    "warn_if_guessable",
]
