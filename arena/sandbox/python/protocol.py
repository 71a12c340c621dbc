"""The protocol between the referee, a bot's template process and its game processes.

Each message is a frame: a 4-byte big-endian length, then the payload.

* referee -> template or game process: ``marshal`` (format 2) of plain data (tuples, lists, dicts, str,
  int, None). The worker trusts the referee, and marshal is the fastest
  codec in the standard library.
* game process (and template) -> referee: UTF-8 JSON. A game process is *not* trusted, so the
  referee decodes only strict JSON (:func:`decode`; never pickle or marshal), refuses a frame
  from its header past ``Limits.max_reply_bytes`` or the turn's ``max_turn_bytes`` and
  ``max_turn_messages``, counts actions of every kind against ``max_turn_actions``, and
  checks every field before use (its CPU for the seat is billed: ``referee_turn_seconds``).

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

``("game", *GameStart)``
    the only game of this process: a fresh ``Bot()`` from the source with ``seed``,
    then ``start_game`` if defined; answered ``["ok", actions, error, load_error, hooks]``.
``("move", view)``
    run ``bot.move(turn)``; ``view`` is a :class:`MoveView` sent as a plain tuple.
``("card", *DrawnCard)`` / ``("hist", history)`` / ``("pile", *PileCards)``
    answers to the worker's ``draw``, ``hist`` and ``pile`` requests.
``("end_round", RoundEnd)``, ``("end_game", GameEnd)``
    the notifications, when the bot defines them.
``("raw", code)``
    tests only, and only when the hello allowed it: run unrestricted code in the hardened worker.

Game process -> referee messages (decoded and checked by :func:`parse_ok` and :func:`parse_step`):
first, unasked, ``["layers", report]``: the layers it is under, written right after hardening and
before any bot code runs (so a bot that escaped the code policy cannot forge it); then
``["ok", actions, error, load_error, hooks]``, ``["draw", actions]``, ``["hist", actions]``, ``["pile", actions]``,
``["done", actions, error]``, ``["raw", result]``. ``hist`` asks for the public history (the bot
read ``turn.history``), then sent with every move; ``pile`` for the round's pile only (the bot
read ``turn.pile`` and not the history), then sent with every move as the cards put since.
An action is ``["p", card, suit]`` (put), ``["s", text]`` (say), ``["o", text]``
(printed output) or ``["f"]`` (finish).

Between its turns a game process is stopped (SIGSTOP); the referee continues it (SIGCONT)
after sending it a message (:mod:`arena.sandbox.python.process`).
"""

from __future__ import annotations

import json
import json.scanner
import struct
from typing import Any, NamedTuple

HEADER = struct.Struct(">I")

#: The largest frame the worker accepts from the referee (the source is at most 256 KiB).
MAX_IN_FRAME = 4 * 2**20


def frame(payload: bytes) -> bytes:
    """``payload`` with its length header."""
    return HEADER.pack(len(payload)) + payload


# -- referee -> game process (trusted; marshal carries plain tuples, so each is sent as ``tuple(x)``) --


class GameStart(NamedTuple):
    """The fields of the ``game`` message: the only game of a process."""

    seed: int
    seat: int
    names: list[str]
    rules: dict[str, Any]
    game_id: str


class MoveView(NamedTuple):
    """The seat's view of its move (R10), the field of a ``move`` message.

    ``counts`` is cards held per seat, then scores, then skips owed; ``history``
    the public events the worker has not seen (None until the bot reads the
    history); ``pile`` the cards put since the worker's last view, as a
    :class:`PileCards` tuple (None unless the bot reads the pile and not the
    history); ``forced`` the card a forced first draw gives (see
    :meth:`arena.game.referee.EngineTable.forced_draw`), or None.
    """

    seat: int
    hand: list[str]
    top: str
    suit: str
    put: list[str]
    first: bool
    stock: int
    pile_size: int
    counts: list[int]
    history: list[dict[str, Any]] | None
    pile: tuple[bool, list[str]] | None
    forced: str | None


class PileCards(NamedTuple):
    """Cards put this round since the worker's last view (public, R10); ``reset``: a new
    round began, and ``cards`` are all of its cards so far."""

    reset: bool
    cards: list[str]


class DrawnCard(NamedTuple):
    """The fields of a ``card`` message: the answer to a ``draw`` request."""

    card: str
    stock: int
    pile_size: int
    history: list[dict[str, Any]] | None


class RoundEnd(NamedTuple):
    """The fields of an ``end_round`` message (a :class:`~arena.game.engine.RoundResult`, sequences as lists)."""

    round: int
    winner: int | None
    points: list[int]
    scores: list[int]
    burned: list[int]


class GameEnd(NamedTuple):
    """The fields of an ``end_game`` message (a :class:`~arena.game.engine.GameResult`, sequences as lists)."""

    scores: list[int]
    losers: list[int]
    places: list[int]
    rounds: int


# -- game process -> referee (untrusted JSON: shapes checked here, contents by the player) --------


class OkReply(NamedTuple):
    """``["ok", actions, error, load_error, hooks]``: the answer to ``game`` and notifications."""

    actions: list[Any]
    error: Any
    load_error: Any
    hooks: Any


class Step(NamedTuple):
    """One message of a game process during a move: ``kind`` (``done``, ``draw``, ``hist``...),
    the actions it reports, and the fields after them (``[error]`` for ``done``)."""

    kind: Any
    actions: list[Any]
    rest: list[Any]


def parse_ok(raw: Any) -> OkReply | None:
    """``raw`` as an :class:`OkReply`, or None when it is not one."""
    if type(raw) is list and len(raw) == 5 and raw[0] == "ok" and type(raw[1]) is list:
        return OkReply(*raw[1:])
    return None


def parse_step(raw: Any) -> Step | None:
    """``raw`` as a :class:`Step`, or None when it is malformed."""
    if type(raw) is not list or len(raw) < 2 or type(raw[1]) is not list:
        return None
    return Step(raw[0], raw[1], raw[2:])


# -- decoding what a game process sends (untrusted bytes) ----------------------------------------

#: The longest integer a reply may hold, in digits: the protocol carries small counts (a pid, an
#: exit status), and a long one costs its reader time quadratic in its length.
MAX_INT_DIGITS = 24


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise ValueError("an integer too long")
    return int(text)


def _constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


# The C scanner of a strict JSON decoder, called directly: one call per reply (no whitespace is
# skipped; the worker sends none), and the whole frame must be one JSON value: no NaN or
# Infinity, no integer longer than MAX_INT_DIGITS (the honest replies of a move hold none), and
# nesting deeper than the interpreter's recursion limit is a RecursionError (C code, no stack risk).
_scan = json.scanner.make_scanner(json.JSONDecoder(parse_int=_int, parse_constant=_constant))  # type: ignore[arg-type]


def decode(text: str) -> Any:
    """The one JSON value that is all of ``text`` (a message from a game process); ValueError if none."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value
