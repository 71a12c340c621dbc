"""The pipe protocol between the referee and a sandbox worker.

Each message is a frame: a 4-byte big-endian length, then the payload.

* referee -> worker: ``marshal`` (format 2) of plain data (tuples, lists, dicts, str,
  int, None). The worker trusts the referee, and marshal is the fastest
  codec in the standard library.
* worker -> referee: UTF-8 JSON. The worker is *not* trusted, so the
  referee decodes only JSON (never pickle or marshal), caps the frame size,
  and checks every field before use.

Referee -> worker messages (first item is the kind):

``("hello", config)``
    sent once: the source, the filename, limits, the uid and hardening options.
``("game", seed, seat, names, rules, game_id)``
    a fresh ``Bot()`` from the source with ``seed``, then ``start_game`` if defined.
``("move", view)``
    run ``bot.move(turn)``; ``view`` is the seat's view (see :func:`arena.sandbox.client.build_view`).
``("card", card, stock, pile_size, history)`` / ``("hist", history)``
    answers to the worker's ``draw`` and ``hist`` requests.
``("end_round", fields)``, ``("end_game", fields)``
    the notifications, when the bot defines them.
``("raw", code)``
    tests only, and only when the hello allowed it: run unrestricted code in the hardened worker.

Worker -> referee messages: ``["ready", report, error]``, ``["ok", actions, error, load_error, hooks]``,
``["draw", actions]``, ``["hist", actions]``, ``["done", actions, error]``, ``["raw", result]``.
An action is ``["p", card, suit]`` (put), ``["s", text]`` (say), ``["o", text]`` (printed
output) or ``["f"]`` (finish).
"""

from __future__ import annotations

import struct

HEADER = struct.Struct(">I")

#: The largest frame the worker accepts from the referee (the source is at most 256 KiB).
MAX_IN_FRAME = 4 * 2**20


def frame(payload: bytes) -> bytes:
    """``payload`` with its length header."""
    return HEADER.pack(len(payload)) + payload
