"""Plugins (pluggy): bots, rule variants and reporters come in by entry point alone."""

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from arena.plugins import get_plugin_manager, reporters, variants


def test_reference_bots_are_registered_through_the_entry_point_group() -> None:
    names = {ep.name for ep in importlib.metadata.entry_points(group="arena.bots")}
    assert "reference" in names
    hook = get_plugin_manager().hook.arena_bots()
    found = {name for batch in hook for name, _ in batch}
    assert {"random", "greedy", "heuristic"} <= found


def test_builtin_variants_and_reporters() -> None:
    found = variants()
    assert found["contest"].changed() == {}
    assert found["stacked"].stacked_effects and found["jack-finish"].jack_finish == 20
    assert {"table", "json", "markdown", "csv"} <= set(reporters())


def make_third_party(root: Path) -> None:
    """A package installed the way pip would: a module plus a dist-info with entry points."""
    (root / "yardbots").mkdir()
    (root / "yardbots" / "__init__.py").write_text(
        textwrap.dedent("""
        import os
        from arena.plugins.hookspecs import hookimpl

        HERE = os.path.dirname(__file__)

        @hookimpl
        def arena_bots():
            return [("lowball", os.path.join(HERE, "lowball.py"))]

        @hookimpl
        def arena_rule_variants():
            return {"short": {"limit": 40}}

        @hookimpl
        def arena_reporters():
            return {"names": lambda doc: ",".join(r["bot"] for r in doc["standings"])}
    """)
    )
    (root / "yardbots" / "lowball.py").write_text(
        textwrap.dedent('''
        """Lowball: puts its cheapest matching card."""

        class Bot:
            name = "lowball"

            def move(self, turn):
                if not turn.puttable() and turn.can_draw():
                    turn.draw()
                while True:
                    options = turn.puttable()
                    if options:
                        turn.put(min(options, key=lambda c: c.points))
                    elif not turn.can_finish() and turn.can_draw():
                        turn.draw()
                    else:
                        break
                turn.finish()
    ''')
    )
    info = root / "yardbots-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: yardbots\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[arena.bots]\nyardbots = yardbots\n")


def test_a_third_party_package_adds_a_bot_a_variant_and_a_reporter(tmp_path: Path) -> None:
    make_third_party(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    cmd = [sys.executable, "-m", "arena", "play", "lowball", "greedy", "--games", "4", "-q"]
    out = subprocess.run(cmd + ["--variant", "short", "--json"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["rules"] == "short" and [r["bot"] for r in doc["standings"]] == ["lowball", "greedy"]
    out = subprocess.run(cmd + ["--format", "names"], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "lowball,greedy"
    listed = subprocess.run(
        [sys.executable, "-m", "arena", "rules", "--list"], capture_output=True, text=True, env=env
    ).stdout
    assert "short" in listed and "limit=40" in listed
