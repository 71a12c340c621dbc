"""The example bots in examples/: restricted style, clean under ``arena check``, better than random."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from arena.botapi.imports import ALLOWED_IMPORTS
from arena.cli import main

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.py"))


def test_there_are_at_least_three_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_in_the_restricted_style(path):
    source = path.read_text()
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc and doc.splitlines()[0].lower().startswith(path.stem), "the first docstring line names the bot"
    assert sum(1 for line in source.splitlines() if line.strip().startswith("#")) >= 5, "commented"
    assert len(source.splitlines()) <= 150, "short"
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            assert not node.id.startswith("_") and node.id != "getattr", node.id
        elif isinstance(node, ast.Attribute):
            assert not node.attr.startswith("_"), node.attr
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            assert not node.name.startswith("_"), node.name
        elif isinstance(node, ast.Import):
            assert all(a.name in ALLOWED_IMPORTS for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.module in ALLOWED_IMPORTS


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_passes_the_check(path, capsys):
    code = main(["check", str(path), "--games", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report["problems"] or report["faults"]
    assert report["clean"] and report["bot"] == path.stem


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_beats_random(path, capsys):
    code = main(["play", str(path), "random", "--games", "40", "--seed", "5", "--trusted", "--json"])
    assert code == 0
    mine, theirs = json.loads(capsys.readouterr().out)["standings"]
    assert mine["faults"] == 0
    assert mine["wins"] >= 28, f"{path.stem} won only {mine['wins']} of 40 against random"
    assert mine["avg_score"] < theirs["avg_score"]
