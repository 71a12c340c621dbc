"""A ladder of bots of known order: the reference heuristic making epsilon-random moves.

``ladder_files(folder)`` writes ``eps00.py`` ... ``eps80.py`` (0, 15, 30, 45, 60
and 80% random moves): each move is the heuristic's with probability
``1 - epsilon``, else the random bot's. More random moves play worse, so the
true order is the file order. Used by ``benchmarks/power.py``; run them with
``--trusted`` (in-process) for speed.
"""

from __future__ import annotations

from pathlib import Path

from arena.seats.loader import resolve_bot

EPSILONS = (0, 15, 30, 45, 60, 80)


def ladder_source(epsilon: int) -> str:
    """Bot source: heuristic with ``epsilon`` percent random moves."""
    heuristic = resolve_bot("heuristic").source.replace("class Bot:", "class _Heuristic:")
    rand = resolve_bot("random").source.replace("class Bot:", "class _Random:")
    return (
        f'"""Heuristic with {epsilon}% random moves (a rung of the power benchmark\'s ladder)."""\n'
        f"import random\n\n{heuristic}\n\n{rand}\n\n"
        f"EPSILON = {epsilon / 100!r}\n\n\n"
        "class Bot:\n"
        f"    name = 'eps{epsilon:02d}'\n\n"
        "    def __init__(self):\n"
        "        self._h = _Heuristic()\n"
        "        self._r = _Random()\n\n"
        "    def move(self, turn):\n"
        "        if EPSILON and random.random() < EPSILON:\n"
        "            self._r.move(turn)\n"
        "        else:\n"
        "            self._h.move(turn)\n"
    )


def ladder_files(folder: str | Path, epsilons: tuple[int, ...] = EPSILONS) -> list[str]:
    """Write the ladder's bot files into ``folder``; their paths, best first."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for eps in epsilons:
        path = out / f"eps{eps:02d}.py"
        path.write_text(ladder_source(eps), encoding="utf-8")
        paths.append(str(path))
    return paths
