"""The ``arena`` command: one module per sub-command, errors as one line, never a traceback.

Each command module has ``register(subparsers)`` (its options) and ``run(args)``; a command
turns its options into typed settings and calls the library, which never sees an
``argparse.Namespace``. Nothing outside this package imports it (tests/test_layers.py).

A run imports only the module of the command it runs (:data:`COMMANDS` names each with its
help line, which ``arena --help`` lists): ``arena play`` never loads the web server, the
tournament database or the report writer (tests/cli/test_cli_start.py).

``ARENA_DEBUG=1`` shows the traceback of every error (an internal error's above all),
for a bug report.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from .. import __version__
from ..errors import BotLoadError, UsageError
from ..playing.interrupts import (
    SIGPIPE_STATUS,
    exit_status,
    quiet_stdout,
    signal_word,
    sigterm_as_ctrl_c,
    stdout_closed,
)
from ..trust.text import escape
from .options import ArgumentParser
from .terminal import safe_output

#: The sub-commands, in the order ``arena --help`` lists them: name and help line. The module
#: ``arena.cli.NAME`` registers the command's options (with this help line: the test checks it).
COMMANDS: tuple[tuple[str, str], ...] = (
    ("play", "play games between 2 to 6 bots and print results"),
    ("replay", "print a game record as a readable log"),
    ("rules", "print the rules in force"),
    ("new", "write a new bot file (or starter kit) to start from"),
    ("check", "check a bot as the organiser will: load it sandboxed, play smoke games"),
    ("submit", "check a bot and store it in a submissions folder, or upload it to a contest server"),
    ("tournament", "round-robin tournament with duplicate seating, results in a database"),
    ("standings", "print a tournament database's standings"),
    ("view", "write a game record as an HTML replay viewer"),
    ("report", "write a tournament's results as a static web site"),
    ("verify", "re-check game records against the rules (an organiser's audit)"),
    (
        "contest",
        "the organiser's commands for `arena serve`'s contest folder "
        "(init, house, invite, guest, final, round, disable, enable, pause, resume)",
    ),
    ("serve", "run a contest's site, API and ladder"),
)

#: ``build_parser(ALL)``: every command's options registered (imports every command module).
ALL = "*"

#: Exit status of an internal error (a bug in arena, not bad input): EX_SOFTWARE.
INTERNAL_ERROR = 70


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option (``arena`` itself takes
    only ``--help`` and ``--version``, which take no value)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """The ``arena`` parser, with the options of ``command`` (of every command with :data:`ALL`;
    none with None): the other commands are listed by name and help line only, their modules
    not imported. ``arena --help`` and ``arena CMD --help`` read the same either way."""
    parser = ArgumentParser(
        prog="arena",
        description="Referee, sandbox and tournaments for yard bridge bots.",
        epilog="Run `arena COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    for name, help in COMMANDS:
        if command in (name, ALL):
            importlib.import_module(f"{__name__}.{name}").register(sub)
        else:
            sub.add_parser(name, help=help)  # never parsed: its command is not the one run
    return parser


def debugging() -> bool:
    """``ARENA_DEBUG=1`` (any value but empty or 0): errors show their traceback."""
    return os.environ.get("ARENA_DEBUG", "") not in ("", "0")


def _safe_streams() -> None:
    """Text no terminal encoding can hold (a lone surrogate in some name) is printed as an
    escape, never an encoding error after the games are played."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def main(argv: Sequence[str] | None = None) -> int:
    _safe_streams()
    with safe_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_of(words))
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with sigterm_as_ctrl_c():
            return int(args.func(args) or 0)
    except (UsageError, BotLoadError) as exc:  # bad input: what is wrong, in one line
        if debugging():
            traceback.print_exc()
        print(f"arena: error: {escape(exc, 600)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"arena: {signal_word(getattr(exc, 'signum', 2))}", file=sys.stderr)
        return exit_status(exc)
    except BrokenPipeError:
        if not stdout_closed():
            if debugging():
                raise
            print("arena: error: a pipe to a helper process broke", file=sys.stderr)
            return 1
        quiet_stdout()  # the reader of our output has gone (`| head`): not an error, nothing more to say
        return SIGPIPE_STATUS
    except Exception as exc:  # a bug in arena: one line, unless ARENA_DEBUG asks for the traceback
        if debugging():
            raise
        where = traceback.extract_tb(exc.__traceback__)[-1:]
        at = f" at {os.path.basename(where[0].filename)}:{where[0].lineno}" if where else ""
        print(
            f"arena: internal error: {type(exc).__name__}: {escape(exc, 300)}{at} "
            "(a bug in arena; run again with ARENA_DEBUG=1 for the traceback, and report it)",
            file=sys.stderr,
        )
        return INTERNAL_ERROR
