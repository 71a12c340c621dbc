"""Escaped (layer 2 only): recover the deal from what the worker holds, by searching master seeds.

It collects every number the worker holds while ``start_game`` runs (the locals of
every frame on the stack, one level into containers: the seed its ``random`` is
seeded with among them) and its game id and seat, then tries master seeds 0..10000
plus the docs' 7 and 2026 under two derivations: the old one (unkeyed SHA-256 of
"seed/parts", bot seeds from the deal seed) and the current one (arena.game.seeds). A
master that explains a number it holds gives the deal seed, so the round's hands.
Then, on its first move of each game, it says:

    FOUND <master> <scheme>      or     NOTFOUND
    PRED <seat> <card> <card> ...      (per other seat: its predicted round-1 hand;
                                        without a master, a random guess of that size)
    BIGINT <n>                         (first game: any int of 129 bits or more in its process)

tests/sandbox/python/test_hostile_secrets.py scores the predictions against the record.
"""
import gc
import hashlib
import random
import sys

import arena.game.seeds
from arena.game.cards import DECK

CANDIDATES = list(range(10001)) + [2026]
SCANNED = []


def old_derive(seed, *parts):
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def contexts(game_id):
    """(deal parts, bots parts) of this game under the play and tournament naming."""
    if game_id.isdigit():
        g = int(game_id) - 1
        return "play", (g,), (g,)
    size, table, deal, rotation = game_id.split("-")
    key = (int(size[:-1]), int(table[1:]), int(deal[1:]), int(rotation[1:]))
    return "tournament", key[:3], key


def schemes(master, kind, deal_parts, bot_parts, seat):
    """Per scheme: (name, deal seed, this seat's bot seed, what the worker may hold)."""
    out = []
    if kind == "play":
        old_deal = old_derive(master, "play", *deal_parts)
    else:
        old_deal = old_derive(master, "tournament", *deal_parts) >> 1
    out.append(("old", old_deal, old_derive(old_deal, "bot", seat)))
    derive = arena.game.seeds.derive_seed
    deal = derive(master, "deal", kind, *deal_parts)
    if kind == "tournament":
        deal >>= 1
    bot_key = derive(master, "bots", kind, *bot_parts)
    out.append(("new", deal, derive(bot_key, "bot", seat)))
    return out


def held_numbers():
    """Every int in the locals of every frame on the stack, and one level into containers."""
    found = set()
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            items = [value]
            if isinstance(value, (list, tuple, set)):
                items += list(value)[:50]
            elif isinstance(value, dict):
                items += list(value.values())[:50]
            for item in items:
                if type(item) is int:
                    found.add(item)
        frame = frame.f_back
    return found


def round_hands(deal_seed, scheme, n, size):
    derive = old_derive if scheme == "old" else arena.game.seeds.derive_seed
    deck = list(DECK)
    random.Random(derive(deal_seed, "round", 1)).shuffle(deck)
    return [[str(c) for c in deck[s * size:(s + 1) * size]] for s in range(n)]


class Bot:
    def start_game(self, info):
        self.seat = info.seat
        self.n = len(info.players)
        self.size = info.rules.hand_size
        self.said = False
        held = held_numbers()
        kind, deal_parts, bot_parts = contexts(str(info.game))
        self.found = None
        for master in CANDIDATES:
            for name, deal, bot_value in schemes(master, kind, deal_parts, bot_parts, self.seat):
                if bot_value in held or deal in held:
                    self.found = (master, name, deal)
                    break
            if self.found:
                break
        if not SCANNED:
            gc.unfreeze()  # the template froze its objects (gc.freeze): get_objects lists them only thawed
            SCANNED.append([o for o in gc.get_objects() if isinstance(o, (dict, list, tuple))])
            self.bigints = set()
            for o in SCANNED[0]:
                values = o.values() if isinstance(o, dict) else o
                for v in list(values)[:1000]:
                    if type(v) is int and v.bit_length() > 128:
                        self.bigints.add(v)
            SCANNED[0] = []
        else:
            self.bigints = set()

    def move(self, turn):
        if not self.said:
            self.said = True
            mine = {str(c) for c in turn.hand}
            if self.found:
                master, scheme, deal = self.found
                turn.say("FOUND %d %s" % (master, scheme))
                hands = round_hands(deal, scheme, self.n, self.size)
            else:
                turn.say("NOTFOUND")
                unseen = [str(c) for c in DECK if str(c) not in mine and c != turn.top]
                hands = [random.sample(unseen, self.size) for _ in range(self.n)]
            for s in range(self.n):
                if s != self.seat:
                    turn.say("PRED %d %s" % (s, " ".join(hands[s])))
            for v in sorted(self.bigints)[:5]:
                turn.say("BIGINT %d" % v)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
