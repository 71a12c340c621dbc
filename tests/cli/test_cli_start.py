"""A fast ``arena`` start (issue 19): a command imports what it runs, not every command's dependencies."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from arena.cli import ALL, COMMANDS, build_parser, command_of

#: Modules a plain ``arena play`` of registered bots never needs: the web server and its
#: templates, the tournament database, Ray, the process pool of ``--workers``, the SPRT, the
#: tournament and report writers.
HEAVY = (
    "starlette",
    "uvicorn",
    "jinja2",
    "ray",
    "sqlite3",
    "multiprocessing",
    "concurrent.futures",
    "arena.playing.sprt",
    "arena.tournament",
    "arena.server",
    "arena.web",
    "arena.verify",
    "arena.cli.tournament",
    "arena.cli.serve",
    "arena.cli.submit",
)

PROBE = """
import json, sys
import arena.cli
after_import = sorted(sys.modules)
arena.cli.main(["play", "random", "random", "--games", "2", "--seed", "3", "-q"])
print(json.dumps([after_import, sorted(sys.modules)]))
"""


def loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_arena_play_imports_no_other_commands_dependencies() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    after_import, after_play = json.loads(out.splitlines()[-1])
    assert "tabulate" not in after_import  # the table is printed by the command that needs it
    for name in HEAVY:
        assert not loaded(after_play, name), f"arena play imported {name}"
    # The probe can fail: the command it ran is loaded, and so is what the command needs.
    assert loaded(after_play, "arena.cli.play") and loaded(after_play, "arena.playing.match")


def test_the_probe_sees_a_heavy_import() -> None:
    # The attack on the check above: a command that does import a heavy module is caught.
    probe = PROBE.replace('["play", "random", "random", "--games", "2", "--seed", "3", "-q"]', '["rules"]')
    probe = probe.replace("arena.cli.main", "import sqlite3; arena.cli.main")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded(json.loads(out.splitlines()[-1])[1], "sqlite3")


@pytest.fixture(scope="module")
def full() -> argparse.ArgumentParser:
    return build_parser(ALL)


@pytest.mark.parametrize("name,help", COMMANDS)
def test_the_table_lists_each_command_with_its_own_help_line(
    full: argparse.ArgumentParser, name: str, help: str
) -> None:
    # `arena --help` lists the table's line without importing the command; the module's own
    # registration must say the same.
    sub = next(a for a in full._actions if a.dest == "command")
    assert next(a.help for a in sub._choices_actions if a.dest == name) == help  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [c[0] for c in COMMANDS])
def test_a_commands_help_is_the_same_built_alone(full: argparse.ArgumentParser, name: str) -> None:
    alone = build_parser(command_of([name, "--help"]))
    assert alone.format_help() == full.format_help()

    def own(parser: object) -> str:
        sub = next(a for a in parser._actions if a.dest == "command")  # type: ignore[attr-defined]
        return str(sub.choices[name].format_help())

    assert own(alone) == own(full)


def test_command_of_skips_the_top_levels_options() -> None:
    assert command_of(["--version"]) is None
    assert command_of(["-h", "play", "x"]) == "play"
    assert command_of(["play", "--games", "3"]) == "play"
    assert command_of(["--", "play"]) is None
