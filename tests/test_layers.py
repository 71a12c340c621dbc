"""The layers stay sealed (issue 9, item 4): checked on the source, so a regression names its line."""

from __future__ import annotations

import ast
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
    for name in ("player.py", "pool.py", "process.py"):
        path = ARENA / "sandbox" / name
        bad = [(line, attr) for line, attr in attributes(path) if attr in ENGINE_PRIVATE]
        assert bad == [], f"{name} reaches into the engine: {bad}"


def test_the_sandbox_does_not_import_the_engine_game() -> None:
    for path in (ARENA / "sandbox").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in ("engine", "arena.engine"):
                names = {a.name for a in node.names}
                assert "Game" not in names, f"{path.name} imports the engine's Game"


def test_one_public_feed_serves_both_kinds_of_seat() -> None:
    # R10: the plain events a sandboxed seat is sent and the read-only ones an in-process
    # bot reads come from one cache, and equal what public_history makes from the log.
    from arena.engine import Game
    from arena.loader import load_trusted, resolve_bot
    from arena.referee import EngineTable, Referee
    from arena.turn import PublicFeed, freeze, public_history

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


#: The command layer: what ``arena ...`` commands run, which talk to the user: the package
#: arena/cli/, and the terminal seat (a person at the table).
COMMAND_MODULES = {"human.py"}


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


def test_no_module_is_over_500_lines() -> None:
    """One concern per module (issue 9): a module past 500 lines is split, not grown."""
    long = {
        str(p.relative_to(ARENA)): n
        for p in sorted(ARENA.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not long, long
