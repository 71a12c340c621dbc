"""The fallback move (docs/bot-api.md, "Faults"): what the referee plays for a seat whose bot
faulted, and what the forward model's playouts play for a seat with no policy of its own."""

from __future__ import annotations

import random

from .engine import Game


def fallback_move(game: Game, rng: random.Random) -> None:
    """The fallback of docs/bot-api.md: put a random legal card if nothing was put yet, else
    draw; cover sixes; finish. Jacks order their own suit."""
    move = game.move
    if move.finished:
        return
    if not move.put and not move.drew:
        options = move.puttable()
        if options:
            game.put(rng.choice(options))
        elif move.can_draw():
            game.draw()
    while move.needs_cover() and not move.can_finish():
        covers = move.puttable()
        if covers:
            game.put(rng.choice(covers))
        else:
            game.draw()
    game.finish()
