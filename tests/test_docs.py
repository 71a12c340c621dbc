"""The reference docs stay in step with the code, and the repository links nowhere outside itself.

- docs/rules.md documents every knob (with its default) and every variant
  that ``arena rules --json`` / ``--list`` print, no knob that does not
  exist, and every rule number the code cites.
- docs/record-format.md documents exactly the events and fields that real
  records hold (games with faults, says, printed output, jacks, burns and
  reshuffles), and what other seats see of each.
- docs/bot-api.md names every public ``turn`` attribute, the notification
  fields, the imports, the limits and the fault kinds.
- Relative links in every ``*.md`` resolve to files (and headings) in the
  repository; no file points at the specs the project was built from.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import run

from arena.botapi.imports import ALLOWED_IMPORTS
from arena.botapi.turn import PlayerInfo, Turn
from arena.cli import main
from arena.game.cards import Card
from arena.game.engine import GameResult, RoundResult
from arena.game.events import Event, FaultKind
from arena.game.explain import describe_rules
from arena.game.referee import BotFault, GameInfo, Referee
from arena.game.rules import Rules, parse_setting
from arena.records.files import read_games
from arena.sandbox import Limits
from arena.sandbox.policy.compiler import ARENA_NAMES
from arena.seats.loader import load_trusted, resolve_bot

FAULT_KINDS = tuple(k.value for k in FaultKind)
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
}


def text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(doc: str, heading: str) -> str:
    """The text under ``heading`` (a whole heading line) up to the next heading of its level or higher."""
    level = len(heading) - len(heading.lstrip("#"))
    start = doc.index(heading + "\n") + len(heading) + 1
    stop = re.compile(rf"^#{{1,{level}}} ", re.M).search(doc, start)
    return doc[start : stop.start() if stop else len(doc)]


def table_rows(block: str) -> list[list[str]]:
    """The body rows of the markdown tables in ``block``, as lists of stripped cells."""
    rows = []
    for line in block.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        rows.append([c.strip() for c in line.strip("|").split("|")])
    # Drop each table's header row (the row before a |---| line).
    headers = set()
    lines = [ln.strip() for ln in block.splitlines()]
    for i, line in enumerate(lines[1:], 1):
        if line.startswith("|") and set(line) <= set("|-: ") and lines[i - 1].startswith("|"):
            headers.add(tuple(c.strip() for c in lines[i - 1].strip("|").split("|")))
    return [r for r in rows if tuple(r) not in headers]


def ticked(cell: str) -> list[str]:
    """The names written in backticks in a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The output of ``arena ARGS``, which must succeed."""
    code, out, err = run(capsys, *args)
    assert code == 0, err
    return out


# -- docs/rules.md and `arena rules` -------------------------------------------------------


def documented_knobs() -> dict[str, str]:
    rows = table_rows(section(text("rules.md"), "## Knobs"))
    return {ticked(r[0])[0]: ticked(r[1])[0] for r in rows}


def test_every_knob_of_arena_rules_json_is_documented_with_its_default(capsys):
    settings = json.loads(run_cli(capsys, "rules", "--json"))
    knobs = documented_knobs()
    settings.pop("name")
    assert set(knobs) == set(settings), "docs/rules.md knobs differ from `arena rules --json`"
    for key, value in settings.items():
        assert parse_setting(f"{key}={knobs[key]}")[1] == value, f"docs/rules.md: default of {key}"


def test_every_documented_knob_is_a_rules_field_and_a_rule_option():
    fields = {f.name for f in dataclasses.fields(Rules)} - {"name"}
    for key, default in documented_knobs().items():
        assert key in fields, f"docs/rules.md documents {key!r}, which is no rule setting"
        assert parse_setting(f"{key}={default}")[0] == key


def test_the_documented_ranges_of_the_knobs_are_the_ones_refused_outside():
    from arena.game.rules import BOUNDS, POINT_BOUNDS

    rows = {ticked(r[0])[0]: r[2] for r in table_rows(section(text("rules.md"), "## Knobs"))}

    def numbers(cell: str) -> tuple[int, ...]:
        return tuple(int(t.replace(",", "")) for t in ticked(cell) if re.fullmatch(r"-?[\d,]+", t))

    for key, (lo, hi) in BOUNDS.items():
        assert numbers(rows[key]) == (lo, hi), f"docs/rules.md: range of {key}"
        for bad in (lo - 1, hi + 1):
            with pytest.raises(ValueError):
                Rules().replace(**{key: bad})
    assert numbers(rows["points"]) == POINT_BOUNDS


def test_every_variant_of_arena_rules_list_is_documented_with_its_settings(capsys):
    from arena.plugins import variants

    listed = {line.split()[0] for line in run_cli(capsys, "rules", "--list").splitlines() if line.strip()}
    rows = table_rows(section(text("rules.md"), "## Variants"))
    documented = {ticked(r[0])[0]: [s for s in ticked(r[1])] for r in rows}
    assert set(documented) == listed == set(variants())
    for name, settings in documented.items():
        changes = dict(parse_setting(s) for s in settings)
        assert Rules(name=name, **changes) == variants()[name], f"docs/rules.md: settings of variant {name}"


def defined_rules() -> set[str]:
    doc = text("rules.md")
    return set(re.findall(r"^\s*- \*\*(R\d+\.\d+)\*\*", doc, re.M)) | set(re.findall(r"^## (R\d+) ", doc, re.M))


def test_every_rule_number_the_code_cites_is_defined_in_rules_md():
    defined = defined_rules()
    cited: dict[str, str] = {}
    for path in (ROOT / "arena").rglob("*.py"):
        for rule in re.findall(r"[\"'(](R\d+(?:\.\d+)?)[\"':]", path.read_text(encoding="utf-8")):
            cited.setdefault(rule, str(path.relative_to(ROOT)))
    for line in describe_rules(Rules()).splitlines():
        m = re.match(r"(R\d+(?:\.\d+)?) ", line)
        if m:
            cited.setdefault(m.group(1), "arena rules")
    assert cited, "no rule numbers found in the code"
    missing = {r: where for r, where in cited.items() if r not in defined}
    assert not missing, f"rule numbers cited but not defined in docs/rules.md: {missing}"


def test_rules_md_numbers_every_rule_from_r1_to_r10():
    defined = defined_rules()
    assert {f"R{i}" for i in range(1, 11)} <= defined
    expected = {"R1": 3, "R2": 4, "R3": 3, "R4": 6, "R5": 4, "R6": 5, "R7": 2, "R8": 4, "R9": 1}
    for head, count in expected.items():
        assert {f"{head}.{i}" for i in range(1, count + 1)} <= defined, head


# -- docs/record-format.md and real records ------------------------------------------------

FAULTY_PRINTER = '''"""Faulty printer: talks, prints, raises and stops short now and then."""


class Bot:
    name = "faulty"

    def __init__(self):
        self.k = 0

    def start_game(self, game):
        print("hello from seat", game.seat)

    def move(self, turn):
        self.k += 1
        turn.say("move " + str(self.k) + " " + "." * 150)  # long enough to reach the say cap
        if self.k % 3 == 0:
            print("thinking", self.k, "-" * 100)
        if self.k % 11 == 0:
            raise ValueError("every eleventh move")
        if self.k % 17 == 0 and not turn.can_finish():
            return
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = options[-1]
                turn.put(card, "h" if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


class Scripted:
    """An in-process player that says things, raises, or faults as a worker would."""

    def __init__(self, name: str, every: int, fault: BotFault | None = None) -> None:
        self.name = name
        self.every = every
        self.fault = fault
        self.k = 0
        self.seen: list[Any] = []

    def start_game(self, info: GameInfo) -> None:
        self.seat = info.seat

    def move(self, turn: Turn) -> None:
        self.k += 1
        self.seen = list(turn.history)
        turn.say(f"move {self.k}")
        if self.k % self.every == 0:
            if self.fault is not None:
                raise self.fault
            raise RuntimeError("scripted")
        options = turn.puttable()
        if options:
            turn.put(options[0])
        elif turn.can_draw():
            turn.draw()
        if turn.can_finish():
            turn.finish()

    def end_round(self, result: RoundResult) -> None:
        pass

    def end_game(self, result: GameResult) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict[str, Any]]]:
    """Real records: `arena play --replay` with a sandboxed faulty printer and the reference
    bots, plus referee games whose seats raise, crash and time out as sandboxed ones do."""
    folder = tmp_path_factory.mktemp("records")
    bot = folder / "faulty.py"
    bot.write_text(FAULTY_PRINTER, encoding="utf-8")
    path = folder / "games.jsonl"
    args = ["play", str(bot), "greedy", "heuristic", "random", "--games", "12", "--seed", "5"]
    assert main([*args, "--replay", str(path), "-q"]) == 0
    games = list(read_games(path))
    path = folder / "reference.jsonl"  # enough in-process games for burns and opening jacks
    args = ["play", "heuristic", "greedy", "random", "random", "--games", "60", "--seed", "7"]
    assert main([*args, "--replay", str(path), "-q"]) == 0
    games += list(read_games(path))
    greedy = load_trusted(resolve_bot("greedy"))
    referee = Referee()
    scripted = [BotFault("crash", "worker died"), BotFault("timeout", "over", retire=True), None]
    scripted.append(BotFault("memory", "over its memory limit (256 MiB)", retire=True))
    for g, fault in enumerate(scripted):
        players = [Scripted("scripted", 5, fault), greedy(g, 1), greedy(g, 2)]
        games.append(referee.play(players, seed=g, game_id=f"x{g}").log)
    return games


def documented_events() -> dict[str, set[str]]:
    doc = section(text("record-format.md"), "## Events")
    events = {}
    for name, body in re.findall(r"^### `([a-z-]+)`\n(.*?)(?=^### |\Z)", doc, re.M | re.S):
        events[name] = {"event"} | {ticked(r[0])[0] for r in table_rows(body)}
    return events


def test_every_event_and_field_of_real_records_is_documented_and_vice_versa(records):
    seen: dict[str, set[str]] = {}
    for game in records:
        for event in game:
            seen.setdefault(event["event"], set()).update(event)
    documented = documented_events()
    assert set(seen) == set(documented), "event types: records vs docs/record-format.md"
    for kind, fields in seen.items():
        docs = sorted(documented[kind])
        assert fields == documented[kind], f"fields of {kind!r}: records {sorted(fields)}, docs {docs}"


def test_the_event_types_of_arena_events_are_the_documented_ones():
    from typing import get_args, get_type_hints

    typed = {get_args(get_type_hints(t)["event"])[0]: t for t in get_args(Event)}
    documented = documented_events()
    assert set(typed) == set(documented)
    for name, t in typed.items():
        assert set(t.__required_keys__ | t.__optional_keys__) == documented[name], name


def test_the_records_hold_what_the_docs_promise(records):
    events = [e for game in records for e in game]
    kinds = {e["kind"] for e in events if e["event"] == "fault"}
    assert kinds == set(FAULT_KINDS)
    assert any(e["event"] == "round" and e["burned"] for e in events)
    assert any(e["event"] == "put" and e.get("opening") and "suit" in e for e in events)
    assert any(e["event"] == "say" and e.get("output") for e in events)
    assert any(e["event"] == "say" and e.get("capped") and not e.get("output") for e in events)
    assert any(e["event"] == "say" and e.get("capped") and e.get("output") for e in events)


def test_fault_kinds_are_documented_in_both_docs():
    doc = section(text("record-format.md"), "### `fault`")
    kind_row = next(r for r in table_rows(doc) if ticked(r[0]) == ["kind"])
    assert set(ticked(kind_row[2])) == set(FAULT_KINDS)
    api = table_rows(section(text("bot-api.md"), "## Faults"))
    assert {ticked(r[0])[0] for r in api if ticked(r[0])} == set(FAULT_KINDS)


def test_what_other_seats_see_is_documented():
    """A seat's ``turn.history`` shows other seats' events exactly in the documented public form."""
    rows = table_rows(section(text("record-format.md"), "## What other seats see"))
    public = {ticked(r[0])[0]: r[1] for r in rows}
    assert set(public) == set(documented_events())
    greedy = load_trusted(resolve_bot("greedy"))
    watcher = Scripted("watcher", 10**9)
    faulty = Scripted("scripted", 4)
    outcome = Referee(Rules(max_rounds=3)).play([watcher, faulty, greedy(0, 2)], seed=11)
    seen = list(watcher.seen)
    assert seen
    pairs = []
    for event in outcome.log:  # the history is the record's public part, in order
        if seen and seen[0]["event"] == event["event"] and seen[0].get("seat") == event.get("seat"):
            pairs.append((seen.pop(0), event))
    assert not seen, "history events that are not in the record"
    kinds = set()
    for shown, event in pairs:
        if event.get("seat") == 0:
            continue
        kinds.add(event["event"])
        cell = public[event["event"]]
        expected = set(event) if cell == "all" else set(ticked(cell))
        assert set(shown) == expected, f"{event['event']!r} shown to another seat as {sorted(shown)}; docs: {cell}"
    assert {"game", "deal", "put", "draw", "finish", "fault", "say", "round"} <= kinds


# -- docs/bot-api.md -------------------------------------------------------------------------


def test_every_public_turn_attribute_is_documented_and_vice_versa():
    doc = text("bot-api.md")
    names = {n for n in dir(Turn) if not n.startswith("_")}
    documented = set(re.findall(r"`turn\.([a-z_]+)", doc))
    assert names - documented == set(), "turn attributes missing from docs/bot-api.md"
    assert documented - names == set(), "docs/bot-api.md names turn attributes that do not exist"


def test_bot_api_md_names_every_field_a_bot_receives():
    doc = text("bot-api.md")
    for field in PlayerInfo._fields:
        assert f"`{field}`" in section(doc, "## `turn`: what a move sees and does"), field
    for field in GameInfo._fields:
        assert f"`game.{field}`" in doc, field
    for cls in (RoundResult, GameResult):
        for f in dataclasses.fields(cls):
            assert f"`result.{f.name}`" in doc, f.name
    for name in (f.name for f in dataclasses.fields(Rules)):
        assert f"`{name}`" in doc, name
    for attr in ("rank", "suit", "points", "index", "symbol"):
        assert hasattr(Card("10h"), attr) and f"`{attr}`" in section(doc, "### Cards"), attr


def test_bot_api_md_lists_the_imports_and_limits():
    doc = text("bot-api.md")
    imports = section(doc, "## Imports and code")
    for module in ALLOWED_IMPORTS:
        assert f"`{module}`" in imports, module
    for name in ARENA_NAMES:
        assert f"`{name}`" in section(doc, "### What `from arena import ...` gives"), name
    limits = {ticked(r[0])[0] for r in table_rows(section(doc, "## Limits")) if ticked(r[0])}
    fields = {f.name: f.default for f in dataclasses.fields(Limits)}
    assert limits <= set(fields), "docs/bot-api.md documents limits that do not exist"
    numeric = {name for name, default in fields.items() if type(default) in (int, float)}
    assert numeric <= limits, "every numeric limit is in docs/bot-api.md"


# -- links -------------------------------------------------------------------------------------


def repo_files() -> Iterator[Path]:
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in files:
            yield Path(folder) / name


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    body = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", body, re.M)}


def test_relative_links_in_markdown_resolve_inside_the_repository():
    bad = []
    checked = 0
    for path in repo_files():
        if path.suffix != ".md":
            continue
        body = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", body):
            if re.match(r"[a-z]+:", target):
                continue
            checked += 1
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}: {target}"
            if not dest.exists() or ROOT not in (dest, *dest.parents):
                bad.append(where)
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(where + " (no such heading)")
    assert checked > 20
    assert not bad, f"links that do not resolve inside the repository: {bad}"


# The specs the project was built from live outside the repository; nothing may point there.
# (Spelled in pieces so that this file does not match itself.)
OUTSIDE = re.compile(
    "|".join(
        [
            r"\.\./" + "shared",
            "/work/" + "shared",
            r"\bshared/[A-Z_]+\.md",
            r"\b(?:RULES|BOT_API|REPLAY_FORMAT|STYLE)" + r"\.md",
        ]
    )
)


def test_no_file_points_outside_the_repository():
    bad = []
    for path in repo_files():
        try:
            body = path.read_bytes()
        except OSError:
            continue
        if b"\0" in body[:4096]:
            continue
        for number, line in enumerate(body.decode("utf-8", "replace").splitlines(), 1):
            if OUTSIDE.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not bad, "files pointing outside the repository:\n" + "\n".join(bad)


REFERENCE = ("rules.md", "bot-api.md", "record-format.md")


def test_readme_and_every_doc_link_to_the_reference_docs():
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        targets = re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8"))
        links = {Path(t.partition("#")[0]).name for t in targets}
        missing = [name for name in REFERENCE if name != path.name and name not in links]
        assert not missing, f"{path.relative_to(ROOT)} does not link to {missing}"


def test_the_example_bot_of_bot_api_md_passes_the_policy_and_plays_clean(tmp_path):
    from arena.sandbox.policy.compiler import check_source
    from arena.trust.botsource import read_bot_file

    example = re.search(r"```python\n(.*?)```", section(text("bot-api.md"), "## A bot is one Python file"), re.S)
    assert example
    path = tmp_path / "shed_first.py"
    path.write_text(example.group(1), encoding="utf-8")
    src = read_bot_file(path)
    assert src.name == "shed-first"
    check_source(src)
    greedy = load_trusted(resolve_bot("greedy"))
    for seed in range(3):
        outcome = Referee().play([load_trusted(src)(seed, 0), greedy(seed, 1), greedy(seed, 2)], seed=seed)
        assert not outcome.faults


def test_every_ruling_the_reference_docs_cite_exists():
    numbers = {int(n) for n in re.findall(r"^(\d+)\. ", text("RULINGS.md"), re.M)}
    for name in REFERENCE:
        cited = {int(n) for n in re.findall(r"Rulings? (\d+)", text(name))}
        assert cited <= numbers, f"docs/{name} cites rulings that docs/RULINGS.md lacks: {cited - numbers}"


# -- names -------------------------------------------------------------------------------------
#
# A doc or a docstring that names a file, a module or a test that does not exist sends its reader
# nowhere (five such names survived the move into folders). Every name of the repository's own
# files, modules and tests in the docs, the README, CONTRIBUTING and the code's own text resolves.

#: A path in the repository, as the docs write them (a glob or a user's own file is not one).
NAMED_PATH = re.compile(
    r"(?<![\w./-])((?:arena|tests|benchmarks|bots|examples|docs)/[\w./-]*\w\.(?:py|md|js|j2|toml|cpp|h|json|html|css|tmpl|png))\b"
)
#: A test named with its file (the file's path, two colons, the test's name).
NAMED_TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
#: A dotted name of the package: ``arena.game.engine.Game``.
NAMED_MODULE = re.compile(r"(?<![\w./-])arena(?:\.[A-Za-z_]\w*)+")
#: A module named relative to the docstring's own package: ``:mod:`.zygote```.
RELATIVE_MOD = re.compile(r":(?:mod|func|class|data|meth|attr):`~?(\.+[\w.]*)`")
#: Names that are examples of a user's own files, not the repository's.
USERS_FILES = {"bots/mybot.py", "examples/mybot.py", "bots/counter.py", "bots/annbot.py"}
#: Dotted names that stand for any: ``arena.cli.NAME``; the layers test's own probe modules.
PLACEHOLDERS = {"arena.cli.NAME", "arena.cli.CMD", "arena._probe_for_test", "arena.game._probe_for_test"}


def texts_to_check() -> Iterator[tuple[Path, str]]:
    for path in repo_files():
        rel = path.relative_to(ROOT)
        if path.suffix == ".md" and rel.parts[0] not in {"node_modules"} and path.name != "CHANGELOG.md":
            yield path, path.read_text(encoding="utf-8")
        elif path.suffix == ".py" and rel.parts[0] in {"arena", "tests", "benchmarks", "bots"}:
            if "hostile" in rel.parts:
                continue  # attack bots, as their authors wrote them
            yield path, path.read_text(encoding="utf-8")


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module of the package, or an attribute of one."""
    import importlib

    parts = dotted.split(".")
    if parts[:2] == ["arena", "__main__"]:  # importing it runs the command
        return (ROOT / "arena" / "__main__.py").exists() and len(parts) == 2
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            obj: Any = importlib.import_module(name)
        except ImportError:
            continue
        for attr in parts[i:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif attr in getattr(obj, "__dataclass_fields__", {}) or attr in getattr(obj, "__annotations__", {}):
                return True  # a field without a class-level default
            else:
                return False
        return True
    return False


def test_every_file_module_and_test_named_exists():
    bad: list[str] = []
    tests_in: dict[str, set[str]] = {}
    for path, body in texts_to_check():
        rel = path.relative_to(ROOT).as_posix()
        for named in set(NAMED_PATH.findall(body)):
            if named in USERS_FILES or (named.startswith("bots/") and not named.endswith(".py")):
                continue  # a user's own file, or a page of a published site (bots/bot-1.html)
            if not (ROOT / named).exists():
                bad.append(f"{rel}: no file {named}")
        for file, test in set(NAMED_TEST.findall(body)):
            if file not in tests_in:
                source = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).exists() else ""
                tests_in[file] = set(re.findall(r"^(?:async )?def (test_\w+)", source, re.M))
            if test not in tests_in[file]:
                bad.append(f"{rel}: no test {file}::{test}")
        for dotted in set(NAMED_MODULE.findall(body)):
            if dotted not in PLACEHOLDERS and not resolves(dotted.rstrip(".")):
                bad.append(f"{rel}: no module or name {dotted}")
        if rel.startswith("arena/") and path.suffix == ".py":
            package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if path.name != "__init__.py":
                package = package.rpartition(".")[0]
            else:
                package = package.removesuffix(".__init__")
            for ref in set(RELATIVE_MOD.findall(body)):
                dots = len(ref) - len(ref.lstrip("."))
                base = package.split(".")[: len(package.split(".")) - (dots - 1)]
                target = ".".join(base + [p for p in ref.lstrip(".").split(".") if p])
                if not resolves(target):
                    bad.append(f"{rel}: no module or name {ref} (from {package})")
    assert not bad, "names of files, modules or tests that do not exist:\n" + "\n".join(sorted(bad))
