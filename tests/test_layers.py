"""The layers stay sealed (issue 9, item 4): checked on the source, so a regression names its line."""

from __future__ import annotations

import ast
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
    for name in ("python/seat.py", "python/factory.py", "python/process.py"):
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
# Counted: every import that runs, at module level or inside a function (a function-level
# import is a dependency too, only a late one, and a cycle through one is as tangled as any).
# Not counted: imports under ``if TYPE_CHECKING:`` (they never run). An edge goes to the module
# named (``from .x import y`` -> ``x``, or ``x.y`` when that is a module), not to the packages
# above it, which Python runs first but which hold no code that imports back.


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ARENA.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in ARENA.rglob("*.py")}


def imports_of(name: str, path: Path) -> dict[str, int]:
    """The arena modules ``name`` imports (module-level and function-level), with a line of each."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typing_only = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for stmt in branch.body
        for node in ast.walk(stmt)
    }
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
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
            # importlib.import_module(".name", __name__) (the lazy attributes of a package)
            arg = node.args[0] if node.args else None
            text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
            targets = [f"{package}{text}"] if text and text.startswith(".") and f"{package}{text}" in MODULES else []
        else:
            continue
        for target in targets:
            if target != name:
                found.setdefault(target, node.lineno)
    return found


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
