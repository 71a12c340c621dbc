"""The layers stay sealed (issue 9, item 4): checked on the source, so a regression names its line."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ARENA = Path(__file__).resolve().parent.parent / "arena"

#: What only the engine and the referee may touch: hidden state, the log, the unchecked path.
ENGINE_PRIVATE = {
    "_move",
    "_table",
    "_emit",
    "_put",
    "_draw",
    "_finish",
    "put_unchecked",
    "draw_unchecked",
    "finish_unchecked",
    "game",
    "hands",
    "log",
    "scores",
    "skips",
    "round_pile",
}


#: Public values that share a name with engine state: the game's id, the results' scores.
PUBLIC_HOLDERS = {"info", "result"}


def attributes(path: Path) -> list[tuple[int, str]]:
    """Every ``x.attr`` of the file, but those read from a GameInfo or a result."""
    return [
        (n.lineno, n.attr)
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Attribute) and not (isinstance(n.value, ast.Name) and n.value.id in PUBLIC_HOLDERS)
    ]


def test_the_sandboxed_seat_never_touches_engine_state() -> None:
    # The sandbox's player sees the game only through the referee's SeatContext.
    for name in ("seat.py", "python/seat.py", "python/factory.py", "python/process.py", "programs/seat.py"):
        path = ARENA / "sandbox" / name
        bad = [(line, attr) for line, attr in attributes(path) if attr in ENGINE_PRIVATE]
        assert bad == [], f"{name} reaches into the engine: {bad}"


def test_the_sandbox_does_not_import_the_engine_game() -> None:
    for path in (ARENA / "sandbox").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("engine"):
                names = {a.name for a in node.names}
                assert "Game" not in names, f"{path.name} imports the engine's Game"


def test_one_public_feed_serves_both_kinds_of_seat() -> None:
    # R10: the plain events a sandboxed seat is sent and the read-only ones an in-process
    # bot reads come from one cache, and equal what public_history makes from the log.
    from arena.botapi.turn import PublicFeed, freeze, public_history
    from arena.game.engine import Game
    from arena.game.referee import EngineTable, Referee
    from arena.seats.loader import load_trusted, resolve_bot

    factory = load_trusted(resolve_bot("greedy"))
    outcome = Referee().play([factory(1, 0), factory(1, 1)], seed=5)
    log = outcome.log
    feed = PublicFeed()
    half = feed.data_since(log[: len(log) // 2], 0)
    assert feed.seen == len(log) // 2
    rest = feed.data_since(log, len(half))
    assert tuple(freeze(e) for e in half + rest) == public_history(log)
    assert feed.update(log) == public_history(log)
    # The forced-draw card goes to the mover only.
    game = Game(2, seed=3)
    game.start_round()
    other = EngineTable(game, 1 - game.mover, ("a", "b"))
    assert other.forced_draw() is None


#: The engine's documented unchecked path (issue 18): for the engine itself and the referee's in-process table.
UNCHECKED = {"put_unchecked", "draw_unchecked", "finish_unchecked"}


def test_only_the_referees_in_process_table_takes_the_unchecked_path() -> None:
    users = {
        str(path.relative_to(ARENA))
        for path in ARENA.rglob("*.py")
        for _, attr in attributes(path)
        if attr in UNCHECKED or attr in {"_put", "_draw", "_finish"}
    }
    assert users <= {"game/engine.py", "game/referee.py"}, users


def test_the_referee_builds_a_turn_only_for_in_process_seats() -> None:
    # A remote seat gets its SeatContext and play_move(); it is never handed a Turn it would ignore.
    from arena.game.referee import RemoteSeat
    from arena.sandbox.python.seat import SandboxedSeat

    assert not hasattr(SandboxedSeat, "move")
    for name in ("sit", "start_game", "play_move", "end_round", "end_game", "close"):
        assert callable(getattr(SandboxedSeat, name)), name
    source = (ARENA / "game" / "referee.py").read_text()
    assert 'getattr(players[s], "sit"' not in source and "RemoteSeat" in source
    assert RemoteSeat.__doc__


#: The command layer: what ``arena ...`` commands run, which talk to the user: the package
#: arena/cli/, and the terminal seat (a person at the table).
COMMAND_MODULES = {"playing/human.py"}


def is_command_module(rel: str) -> bool:
    return rel.startswith("cli/") or rel in COMMAND_MODULES


def test_library_code_does_not_print() -> None:
    # Library modules hand text and progress to their caller (callbacks, returned values);
    # only the command layer prints or draws a progress bar.
    found = []
    for path in sorted(ARENA.rglob("*.py")):
        rel = path.relative_to(ARENA).as_posix()
        if is_command_module(rel):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                found.append(f"{rel}:{node.lineno} print")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(n.split(".")[0] == "tqdm" for n in names):
                    found.append(f"{rel}:{node.lineno} tqdm")
    assert found == []


#: The line budget of a module: one concern per module (issue 9). A module past it is split by
#: concern, or named here with its own limit and the reason it is one piece: never split a class
#: in two to pass.
LINE_BUDGET = 500
OVER_BUDGET: dict[str, tuple[int, str]] = {}


def test_modules_keep_to_the_line_budget() -> None:
    long = {
        rel: n
        for p in sorted(ARENA.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines()))
        > OVER_BUDGET.get(rel := p.relative_to(ARENA).as_posix(), (LINE_BUDGET, ""))[0]
    }
    assert not long, f"over the line budget (split by concern, or name it in OVER_BUDGET with a reason): {long}"
    for rel, (limit, reason) in OVER_BUDGET.items():
        assert (ARENA / rel).exists() and limit > LINE_BUDGET and reason, rel


# -- the import graph ----------------------------------------------------------------------
#
# Counted: every import, at module level or inside a function (a function-level import is a
# dependency too, only a late one, and a cycle through one is as tangled as any), and under
# ``if TYPE_CHECKING:`` (it never runs, but a module that names another's types depends on it:
# a knot of type-only imports is a knot all the same, issue 28). An edge goes to the module
# named (``from .x import y`` -> ``x``, or ``x.y`` when that is a module), not to the packages
# above it, which Python runs first but which hold no code that imports back.


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ARENA.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in ARENA.rglob("*.py")}


def imports_of(name: str, path: Path) -> dict[str, int]:
    """The arena modules ``name`` imports (module-level, function-level and type-only), with a line of each."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name in MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names]
            targets = [t for t in targets if t in MODULES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module":
            # importlib.import_module(".name", __name__): the lazy attributes of a package; a name
            # made at run time is one of the module's table of them ({"Name": "sub.module"}).
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                texts = [arg.value]
            else:
                texts = [
                    v.value
                    for table in ast.walk(tree)
                    if isinstance(table, ast.Dict)
                    for v in table.values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)
                ]
            relative = [t if t.startswith(".") else f".{t}" for t in texts]
            targets = [t for t in (_resolve(text, package) for text in relative) if t in MODULES]
        else:
            continue
        for target in targets:
            if target != name:
                found.setdefault(target, node.lineno)
    return found


def _resolve(text: str, package: str) -> str:
    """A relative module name as ``import_module(text, package)`` reads it."""
    try:
        return importlib.util.resolve_name(text, package)
    except ImportError:
        return ""


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_arena_has_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_function_level_cycle() -> None:
    # The attack on the check above: a cycle closed by an import inside a function.
    graph = {**GRAPH, "arena.game.rules": {**GRAPH["arena.game.rules"], "arena.cli": 1}}
    assert any("arena.cli" in c and "arena.game.rules" in c for c in cycles(graph))
    src = "def f():\n    from .playing.match import run_match\n"
    fake = ARENA / "_probe_for_test.py"
    try:
        fake.write_text(src)
        assert "arena.playing.match" in imports_of("arena._probe_for_test", fake)
    finally:
        fake.unlink()


def test_the_cycle_finder_counts_type_only_imports(tmp_path: Path) -> None:
    # The attack issue 28 found three of: a knot tied by imports under ``if TYPE_CHECKING:``
    # (a Plan in the runner named by the loop, the runner importing the loop).
    fake = tmp_path / "_probe_for_test.py"
    fake.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .playing.match import run_match\n")
    found = imports_of("arena._probe_for_test", fake)
    assert "arena.playing.match" in found
    graph = {**GRAPH, "arena._probe_for_test": found}
    graph["arena.playing.match"] = {**GRAPH["arena.playing.match"], "arena._probe_for_test": 1}
    assert any("arena._probe_for_test" in c and "arena.playing.match" in c for c in cycles(graph))
    # ... and a package's lazy attributes, named at run time from its table.
    lazy = tmp_path / "__init__.py"
    lazy.write_text(
        'import importlib\n_LAZY = {"Seating": "..seats.seating", "Limits": "limits"}\n'
        "def __getattr__(name):\n    return importlib.import_module(_LAZY[name], __name__)\n"
    )
    assert {"arena.seats.seating", "arena.sandbox.limits"} <= set(imports_of("arena.sandbox", lazy))


def test_only_the_command_layer_imports_it() -> None:
    users = {
        f"{name}:{line}"
        for name, imports in GRAPH.items()
        if not (name == "arena.cli" or name.startswith("arena.cli.") or name == "arena.__main__")
        for target, line in imports.items()
        if target == "arena.cli" or target.startswith("arena.cli.")
    }
    assert users == set()


#: ``argparse.Namespace`` or ``Namespace`` as a name of its own (not ``BotNamespace``).
NAMESPACE = re.compile(r"(?<![\w.])(argparse\.)?Namespace\b")


def test_no_library_function_takes_an_argparse_namespace() -> None:
    # Commands build typed settings from their options; the library never sees a Namespace.
    found = []
    for name, path in MODULES.items():
        if name == "arena.cli" or name.startswith("arena.cli."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                    if arg is not None and arg.annotation is not None and NAMESPACE.search(ast.unparse(arg.annotation)):
                        found.append(f"{name}:{node.lineno} {node.name}({arg.arg})")
    assert found == []


# -- one seat contract, one way to seat a table (issue 28) ----------------------------------


def referee_plays(tree: ast.AST) -> list[int]:
    """Lines that call a referee's ``play``: ``Referee(...).play(``, ``referee.play(``, ``self.referee.play(``."""
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "play"
        and re.search("referee", ast.unparse(n.func.value), re.IGNORECASE)
    ]


def test_only_the_seating_plays_a_referee() -> None:
    # A game is put together in one place (arena/seats/seating.py): nowhere else builds seats,
    # streams and stand-ins and hands them to the referee, and nothing else can: only the
    # seating imports the Referee.
    playing = {}
    importing = set()
    for path in sorted(ARENA.rglob("*.py")):
        rel = path.relative_to(ARENA).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if referee_plays(tree):
            playing[rel] = referee_plays(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "Referee" for a in node.names):
                importing.add(rel)
    assert set(playing) == {"seats/seating.py"}, playing
    assert importing == {"seats/seating.py"}, importing
    # The check finds a call that would slip past it.
    assert referee_plays(ast.parse("outcome = Referee(rules).play(players, seed=1)\nself.referee.play(p)"))


#: Duck-typed checks of a factory that the seat contract makes needless (issue 28 found nine).
DUCK_TYPED = {"stream", "close", "program", "move_cpu"}


def test_no_factory_is_asked_whether_it_streams_or_closes() -> None:
    # Every factory has ``stream`` and ``close`` (arena/seats/contract.py): no
    # ``hasattr(f, "stream")`` or ``getattr(f, "close", None)`` remains to tell them apart.
    found = []
    for path in sorted(ARENA.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in DUCK_TYPED
            ):
                found.append(f"{path.relative_to(ARENA)}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_every_factory_keeps_the_seat_contract() -> None:
    from arena.playing.human import human_factory
    from arena.sandbox.programs.seat import ProgramFactory, ProgramStream
    from arena.sandbox.python.factory import SandboxFactory, Stream
    from arena.seats.contract import InProcessFactory, InProcessStream
    from arena.seats.loader import TrustedFactory, load_trusted, resolve_bot
    from arena.web.seat import SeatState, web_factory

    for kind in (SandboxFactory, ProgramFactory, TrustedFactory, InProcessFactory):
        assert callable(kind.stream) and callable(kind.close) and callable(kind.__call__), kind
    for stream in (Stream, ProgramStream, InProcessStream):
        assert callable(stream.close) and callable(stream.__call__), stream
    for factory in (human_factory(), web_factory(SeatState()), load_trusted(resolve_bot("greedy"))):
        stream = factory.stream()
        stream(1, 0, deal=7)
        try:
            stream(2, 1, deal=7)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{factory!r}: a stream played one deal twice")
        factory.close()


def test_the_two_kinds_of_sandboxed_seat_share_one_base() -> None:
    # The Python worker and programs keep only their wire: what a seat in another process does
    # (bank, clocks, spawn-or-take, faults, turn bounds, streams, close) is the base's, once.
    from arena.sandbox.programs.seat import ProgramFactory, ProgramSeat, ProgramStream
    from arena.sandbox.python.factory import SandboxFactory, Stream
    from arena.sandbox.python.seat import SandboxedSeat
    from arena.sandbox.seat import ProcessFactory, ProcessSeat, ProcessStream

    assert issubclass(SandboxedSeat, ProcessSeat) and issubclass(ProgramSeat, ProcessSeat)
    assert issubclass(SandboxFactory, ProcessFactory) and issubclass(ProgramFactory, ProcessFactory)
    assert issubclass(Stream, ProcessStream) and issubclass(ProgramStream, ProcessStream)
    shared = {"_take", "_live", "_spent", "_budget", "_count", "_overload", "_fault", "close", "sit"}
    for seat in (SandboxedSeat, ProgramSeat):
        own = {name for name in vars(seat) if name in shared and name != "_spent"}
        assert own == set(), f"{seat.__name__} writes again what the base does: {own}"
    for factory in (SandboxFactory, ProgramFactory):
        assert not {"record", "__call__", "stream"} & set(vars(factory)), factory
    for stream in (Stream, ProgramStream):
        assert not {"__call__", "take", "give_back", "close"} & set(vars(stream)), stream
    # Neither wire imports the other's (a program's seat took the Python seat's private clock).
    for one, other in (("python", "programs"), ("programs", "python")):
        seat = f"arena.sandbox.{one}.seat"
        assert not [t for t in GRAPH[seat] if t.startswith(f"arena.sandbox.{other}.")], GRAPH[seat]


def test_supervision_is_defined_once() -> None:
    defined = [
        f"{path.relative_to(ARENA)}:{node.name}"
        for path in sorted(ARENA.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name.endswith("supervision")
    ]
    assert defined == ["sandbox/seat.py:supervision"]


def test_the_server_does_not_import_the_tournaments_game_runner() -> None:
    # The ladder and the tables seat their games as the tournament does, through the Seating.
    users = sorted(
        name
        for name, imports in GRAPH.items()
        if name.startswith("arena.server")
        for target in imports
        if target == "arena.tournament.backends.games"
    )
    assert users == []
    assert "arena.seats.seating" in GRAPH["arena.server.ladder.matchmaker"]
    assert "arena.seats.seating" in GRAPH["arena.server.tables.worker"]


# -- the layers: docs/ARCHITECTURE.md's table is the rule ------------------------------------
#
# The table under ``LAYERS_HEADING`` (folder | owns | may import) is the one statement of what a
# folder may import: read here, so the doc and the rule enforced cannot drift apart. A row names a
# package of arena/ (``sandbox/jail/``) or a module at its root (``api.py``); a module belongs to
# the row of its nearest package (a package with sub-packages of its own rows, ``sandbox/``, holds
# the modules directly in it). Exact both ways: a module may import only what its row lists, and a
# row lists nothing its modules do not import (a stale permission reads as a dependency).

DOC = ARENA.parent / "docs" / "ARCHITECTURE.md"
LAYERS_HEADING = "## The folders and what they may import"
TICKED = re.compile(r"`([^`]+)`")


def layer_table(text: str) -> dict[str, set[str]]:
    """The rows of the doc's layer table: each row's name -> the rows it may import.

    :raises ValueError: no such section, or a row that is not ``| `name` | owns | `a`, `b` |``.
    """
    start = text.index(LAYERS_HEADING + "\n") + len(LAYERS_HEADING) + 1
    stop = re.compile(r"^#{1,2} ", re.M).search(text, start)
    rows: dict[str, set[str]] = {}
    for line in text[start : stop.start() if stop else len(text)].splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells == ["folder", "owns", "may import"]:
            continue
        names = TICKED.findall(cells[0])
        if len(cells) != 3 or len(names) != 1 or names[0] in rows:
            raise ValueError(f"{DOC.name}: not a row of the layer table: {line}")
        rows[names[0]] = set(TICKED.findall(cells[2]))
    if not rows:
        raise ValueError(f"{DOC.name}: no layer table under {LAYERS_HEADING!r}")
    return rows


def layer_names(root: Path = ARENA) -> set[str]:
    """What the table must name: every package of arena/ (``sandbox/jail/``) and every module at its root."""
    packages = {f"{p.parent.relative_to(root).as_posix()}/" for p in root.rglob("__init__.py") if p.parent != root}
    return packages | {p.name for p in root.glob("*.py")}


def layer_of(name: str, rows: dict[str, set[str]], modules: dict[str, Path] = MODULES) -> str | None:
    """The row that module ``name`` belongs to: a root module's own, else its nearest package's."""
    path = modules[name].relative_to(ARENA)
    if len(path.parts) == 1:
        return path.name if path.name in rows else None
    for folder in path.parents:
        if f"{folder.as_posix()}/" in rows:
            return f"{folder.as_posix()}/"
    return None


def table_problems(rows: dict[str, set[str]], names: set[str]) -> list[str]:
    """What is wrong with the table itself: a package or root module without a row, a row that
    names nothing there, a permission that names no row or the row itself."""
    problems = [f"{n}: no row in {DOC.name}" for n in sorted(names - set(rows))]
    problems += [f"{n}: a row for nothing in arena/" for n in sorted(set(rows) - names)]
    for row, allowed in sorted(rows.items()):
        problems += [f"{row}: may import {a}, which is no row" for a in sorted(allowed - set(rows))]
        problems += [f"{row}: lists itself" for a in allowed if a == row]
    return problems


def layer_violations(
    graph: dict[str, dict[str, int]], rows: dict[str, set[str]], modules: dict[str, Path] = MODULES
) -> list[str]:
    """Every import the table forbids, as ``module:line imports target (row -> row)``."""
    bad = []
    for name, imports in sorted(graph.items()):
        here = layer_of(name, rows, modules)
        for target, line in sorted(imports.items()):
            there = layer_of(target, rows, modules)
            if here is None or there is None or (there != here and there not in rows[here]):
                bad.append(f"{name}:{line} imports {target} ({here} -> {there})")
    return bad


def layers_used(graph: dict[str, dict[str, int]], rows: dict[str, set[str]]) -> dict[str, set[str]]:
    """The rows each row's modules do import."""
    used: dict[str, set[str]] = {row: set() for row in rows}
    for name, imports in graph.items():
        here = layer_of(name, rows)
        for target in imports:
            there = layer_of(target, rows)
            if here is not None and there is not None and there != here:
                used[here].add(there)
    return used


LAYERS = layer_table(DOC.read_text(encoding="utf-8"))


def test_the_layer_table_names_every_package_and_nothing_else() -> None:
    assert table_problems(LAYERS, layer_names()) == []


def test_every_import_is_one_the_layer_table_allows() -> None:
    # Module-level, function-level and type-only imports alike (GRAPH): a new dependency between
    # folders is a decision written in docs/ARCHITECTURE.md first.
    assert layer_violations(GRAPH, LAYERS) == []


def test_the_layer_table_allows_nothing_that_is_not_imported() -> None:
    used = layers_used(GRAPH, LAYERS)
    stale = {row: sorted(allowed - used[row]) for row, allowed in LAYERS.items() if allowed - used[row]}
    assert stale == {}, f"permissions in {DOC.name} that no import uses (drop them): {stale}"


def test_a_forbidden_import_is_refused(tmp_path: Path) -> None:
    # The attack on the rule: the game reaching up into the server, written in a module's source.
    probe = ARENA / "game" / "_probe_for_test.py"
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from ..server.http.app import create_app\n")
    found = imports_of("arena.game._probe_for_test", source)
    assert found == {"arena.server.http.app": 2}
    modules = {**MODULES, "arena.game._probe_for_test": probe}  # where it would sit: in game/
    bad = layer_violations({**GRAPH, "arena.game._probe_for_test": found}, LAYERS, modules)
    assert bad == ["arena.game._probe_for_test:2 imports arena.server.http.app (game/ -> server/http/)"]
    # ... and a permission taken out of the doc's text refuses the imports that used it.
    text = DOC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `records/` |"))
    assert "`trust/`" in row
    narrower = layer_table(text.replace(row, row.replace("`trust/`", "")))
    assert narrower["records/"] == LAYERS["records/"] - {"trust/"}
    bad = layer_violations(GRAPH, narrower)
    assert bad and all(b.startswith("arena.records.") and "(records/ -> trust/)" in b for b in bad), bad


def test_a_folder_missing_from_the_table_is_refused() -> None:
    text = DOC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `web/` |"))
    without = layer_table(text.replace(row + "\n", ""))
    assert "web/" not in without
    assert "web/: no row in ARCHITECTURE.md" in table_problems(without, layer_names())
    bad = layer_violations(GRAPH, without)
    assert any(b.startswith("arena.web.") and "(None -> " in b for b in bad), bad
    assert any("imports arena.web." in b and "-> None)" in b for b in bad), bad
    # A new package with no row of its own, and a row whose cells are not the table's, are refused too.
    assert table_problems(LAYERS, layer_names() | {"newfolder/"}) == ["newfolder/: no row in ARCHITECTURE.md"]
    try:
        layer_table(text.replace(row, "| `web/` | the web |"))
    except ValueError as exc:
        assert "not a row of the layer table" in str(exc)
    else:
        raise AssertionError("a row of two cells was read")
