"""The protocol between the referee, a bot's template process and its game processes.

Each message is a frame: a 4-byte big-endian length, then the payload.

* referee -> template or game process: ``marshal`` (format 2) of plain data (tuples, lists, dicts, str,
  int, None). The worker trusts the referee, and marshal is the fastest
  codec in the standard library.
* game process (and template) -> referee: UTF-8 JSON. A game process is *not* trusted, so the
  referee decodes only JSON (never pickle or marshal), caps the frame size,
  and checks every field before use.

Referee -> template messages (over a unix socket; the template is trusted, it runs no bot code):

``("hello", config)``
    sent once: the source, the filename, limits, whether to drop the uid, hardening options;
    answered ``["ready", report, error]`` (the template's layers, a compile error or None).
``("fork", pids)`` with three descriptors attached (SCM_RIGHTS)
    fork a game process on those descriptors (its commands, its replies, its stderr);
    answered ``["forked", pid]``. ``pids``: game processes the referee has killed, to reap now.
``("status", pid, seconds)``
    how game process ``pid`` ended (waiting up to ``seconds``), without reaping it:
    ``["status", code]``, ``code`` as ``Popen.returncode`` or None.

Referee -> game process messages (first item is the kind):

``("game", seed, seat, names, rules, game_id)``
    the only game of this process: a fresh ``Bot()`` from the source with ``seed``,
    then ``start_game`` if defined; answered ``["ok", actions, error, load_error, hooks, report]``.
``("move", view)``
    run ``bot.move(turn)``; ``view`` is the seat's view (see :meth:`arena.sandbox.player.WorkerPlayer.move`).
``("card", card, stock, pile_size, history)`` / ``("hist", history)``
    answers to the worker's ``draw`` and ``hist`` requests.
``("end_round", fields)``, ``("end_game", fields)``
    the notifications, when the bot defines them.
``("raw", code)``
    tests only, and only when the hello allowed it: run unrestricted code in the hardened worker.

Game process -> referee messages: ``["ok", actions, error, load_error, hooks]`` (``report`` added
to the answer to ``game``), ``["draw", actions]``, ``["hist", actions]``, ``["done", actions, error]``,
``["raw", result]``. An action is ``["p", card, suit]`` (put), ``["s", text]`` (say), ``["o", text]``
(printed output) or ``["f"]`` (finish).

Between its turns a game process is stopped (SIGSTOP); the referee continues it (SIGCONT)
after sending it a message (:mod:`arena.sandbox.process`).
"""

from __future__ import annotations

import struct

HEADER = struct.Struct(">I")

#: The largest frame the worker accepts from the referee (the source is at most 256 KiB).
MAX_IN_FRAME = 4 * 2**20


def frame(payload: bytes) -> bytes:
    """``payload`` with its length header."""
    return HEADER.pack(len(payload)) + payload
