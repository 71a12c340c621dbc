"""The desk's view of an upload: each file highlighted by its language and its diff against the
author's previous version, made once, off the server's process, and stored.

The desk recomputed an unbounded ``difflib`` diff and the highlighting on every view of a review page,
in the server's process (two 150 KB versions: 15 s of its CPU a view). Now the check worker makes
the view once, after an upload's check (:func:`make`), each step in a child process of its own
bounded in CPU time and memory (:data:`HIGHLIGHT_SECONDS`, :data:`DIFF_SECONDS`, :data:`MEMORY`):
a lexer past its bound leaves the file plain, a diff past it says "too large to diff" and the page
offers both versions. The result is stored in the contest database (:mod:`..store.reviews`) and the
page only renders it; what it reads back is checked again (:func:`shown`: the database is input too).

Each file of a bundle is its own section under its own name (from the bundle's structure: no
text inside a file can make a heading), with the author's own line numbers: lines end at ``\\n``,
``\\r\\n`` or ``\\r`` (what compilers and Pygments count), tabs are expanded to stops every
:data:`TAB` columns, and nothing is added before the first line.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import PurePosixPath
from typing import Any

from ...errors import BotLoadError
from ...trust.botfolder import unbundle
from .uploads import is_bundle

#: The lexer (a Pygments alias) and the language's name, per file extension; anything else is plain text.
LANGUAGES = {
    ".py": ("python", "Python"),
    ".js": ("javascript", "JavaScript"),
    ".cpp": ("cpp", "C++"),
    ".cc": ("cpp", "C++"),
    ".h": ("cpp", "C++"),
    ".hpp": ("cpp", "C++"),
    ".c": ("c", "C"),
    ".toml": ("toml", "TOML"),
    ".rs": ("rust", "Rust"),
    ".go": ("go", "Go"),
    ".java": ("java", "Java"),
}
PLAIN = ("", "plain text")
#: Columns between tab stops when tabs are expanded (the width most editors of these languages show).
TAB = 4
#: CPU seconds the highlighting of one upload, and its diff, may take (each in a child process).
HIGHLIGHT_SECONDS = 5
DIFF_SECONDS = 5
#: Bytes of memory either child may map.
MEMORY = 1024 * 2**20
#: Coloured pieces a file may have (a 256 KiB file of ordinary code has about 60 000): past it the file
#: is shown plain, so no upload makes the page's first rendering cost more than an ordinary one's.
MAX_PIECES = 100_000
#: The stored view's format (a stored view of another format is made again).
FORMAT = 1
#: Context lines around each change of a diff.
CONTEXT = 3

File = tuple[str, "str | None"]  # a file's name and its text (None: not UTF-8 text)


def language(name: str) -> tuple[str, str]:
    """(Pygments alias, language's name) of a file name; :data:`PLAIN` for an extension not listed."""
    return LANGUAGES.get(PurePosixPath(name).suffix.lower(), PLAIN)


def files_of(bot: str, source: bytes) -> tuple[list[File], str | None]:
    """An upload's files, each with its text (None when not UTF-8), and a note when it cannot be read:
    a Python bot is one file ``BOT.py``; a program its bundle's files, by the names it holds."""
    if not is_bundle(source):
        try:
            return [(f"{bot}.py", source.decode("utf-8"))], None
        except UnicodeDecodeError:
            return [(f"{bot}.py", None)], None
    try:
        _, files = unbundle(source.decode("utf-8", "replace"), "stored")
    except BotLoadError as exc:
        return [], f"an unreadable stored program: {exc.message}"
    out: list[File] = []
    for name, data in files:
        try:
            out.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            out.append((name, None))
    return out, None


def lines_of(text: str) -> list[str]:
    """The author's lines: ended by ``\\n``, ``\\r\\n`` or ``\\r`` (not by form feeds or Unicode
    separators, which show as escapes), tabs expanded; no empty line after a final line end."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.expandtabs(TAB) for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def plain(text: str) -> list[list[list[str]]]:
    """A file's lines as the page reads them, without colour: each line one piece of no class."""
    return [[["", line]] if line else [] for line in lines_of(text)]


def highlight(name: str, text: str) -> list[list[list[str]]]:
    """A file's lines as pieces ``[css class, text]``, by the lexer of its extension (Pygments'
    short class names: ``k`` keyword, ``nf`` function name...); plain text for an unknown one."""
    alias, _ = language(name)
    if not alias:
        return plain(text)
    from pygments.lexers import get_lexer_by_name
    from pygments.token import STANDARD_TYPES

    lexer = get_lexer_by_name(alias, stripnl=False, stripall=False, ensurenl=False, tabsize=0)
    lines: list[list[list[str]]] = [[]]
    for kind, piece in lexer.get_tokens("\n".join(lines_of(text))):
        while kind not in STANDARD_TYPES and kind.parent is not None:
            kind = kind.parent
        css = STANDARD_TYPES.get(kind, "")
        css = "" if css == "w" else css  # whitespace needs no class
        for i, part in enumerate(piece.split("\n")):
            if i:
                lines.append([])
            if not part:
                continue
            line = lines[-1]
            if line and line[-1][0] == css:  # one piece for a run of one class: a smaller page
                line[-1][1] += part
            else:
                line.append([css, part])
    want = len(lines_of(text))
    return lines[:want] + [[] for _ in range(want - len(lines))]


def diff(old: list[File], new: list[File]) -> list[dict[str, Any]]:
    """Each file's change, by name: ``changed`` (with its unified diff as ``[kind, line]``, kind
    ``add``, ``del``, ``hunk`` or ``same``), ``added``, ``removed``, ``unchanged`` or ``binary``."""
    before, after = dict(old), dict(new)
    names = [n for n, _ in new] + [n for n, _ in old if n not in after]
    out = []
    for name in names:
        a, b = before.get(name, ""), after.get(name, "")
        lines: list[list[str]]
        if a is None or b is None:
            change, lines = ("binary", []) if a != b else ("unchanged", [])
        elif name in before and a == b:
            change, lines = "unchanged", []
        else:
            change = "added" if name not in before else "removed" if name not in after else "changed"
            found = difflib.unified_diff(lines_of(a), lines_of(b), "previous", "this", lineterm="", n=CONTEXT)
            lines = [[{"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same"), line] for line in list(found)[2:]]
        out.append({"name": name, "change": change, "lines": lines})
    return out


# -- made once, bounded, in a child process ------------------------------------------------------


def _child(step: str, payload: dict[str, Any], seconds: int) -> Any:
    """``step`` run by ``python -m arena.server.contest.review STEP`` within ``seconds`` of CPU and
    :data:`MEMORY`; its JSON answer, or None when it went past a bound (or failed)."""
    cmd = [sys.executable, "-m", "arena.server.contest.review", step, str(seconds)]
    try:
        done = subprocess.run(
            cmd, input=json.dumps(payload).encode(), capture_output=True, timeout=seconds * 3 + 10, check=False
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    if done.returncode != 0:
        return None
    try:
        return json.loads(done.stdout)
    except ValueError:
        return None


def _encoded(files: list[File]) -> list[list[str | None]]:
    return [[name, text] for name, text in files]


def make(
    bot: str, source: bytes, previous: tuple[int, int, bytes] | None, seconds: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The stored view of an upload of ``bot``: its files highlighted and, with ``previous`` (the
    author's previous version: its submission id, version number and bytes), the diff against it."""
    highlight_s, diff_s = seconds or (HIGHLIGHT_SECONDS, DIFF_SECONDS)
    files, problem = files_of(bot, source)
    coloured = _child("highlight", {"files": _encoded(files)}, highlight_s) if files else []
    shown_files = []
    for i, (name, text) in enumerate(files):
        lang = language(name)
        entry: dict[str, Any] = {"name": name, "language": lang[1], "lexer": lang[0], "note": None}
        if text is None:
            entry.update(lines=[], note="not UTF-8 text: not shown")
        elif isinstance(coloured, list) and i < len(coloured) and isinstance(coloured[i], list):
            entry["lines"] = coloured[i]
        else:
            bound = f"{highlight_s} s of CPU, {MEMORY // 2**20} MiB, {MAX_PIECES} pieces"
            entry.update(lines=plain(text), lexer="", note=f"not highlighted: past the lexer's bound ({bound})")
        shown_files.append(entry)
    view: dict[str, Any] = {"format": FORMAT, "files": shown_files, "problem": problem, "previous": None}
    view["diff"] = {"state": "none", "files": []}
    if previous is not None:
        sid, version, old_source = previous
        view["previous"] = {"id": sid, "version": version}
        old, _ = files_of(bot, old_source)
        found = _child("diff", {"old": _encoded(old), "new": _encoded(files)}, diff_s)
        if isinstance(found, list):
            view["diff"] = {"state": "ok", "files": found}
        else:
            view["diff"] = {"state": "too-large", "files": [], "seconds": diff_s}
    return view


def plain_view(files: list[File], problem: str | None) -> dict[str, Any]:
    """The view of an upload before the check worker made its own: each file plain, no diff."""
    shown_files = []
    for name, text in files:
        lang = language(name)
        note = None if text is not None else "not UTF-8 text: not shown"
        lines = plain(text) if text is not None else []
        shown_files.append({"name": name, "language": lang[1], "lexer": "", "lines": lines, "note": note})
    return {"format": FORMAT, "files": shown_files, "problem": problem, "previous": None, "diff": {"state": "none"}}


def _limit(seconds: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def main(argv: list[str]) -> int:
    """The child: read the step's JSON on stdin, write its answer on stdout (bounded first)."""
    step, seconds = argv[0], int(argv[1])  # our own command line, never a request's
    _limit(seconds)
    data = json.loads(sys.stdin.buffer.read())
    files = [(str(n), t if isinstance(t, str) else None) for n, t in data.get("files", [])]
    if step == "highlight":
        answer: Any = []
        for name, text in files:
            lines = highlight(name, text) if text is not None else []
            answer.append(lines if sum(len(line) for line in lines) <= MAX_PIECES else None)
    else:
        old = [(str(n), t if isinstance(t, str) else None) for n, t in data["old"]]
        new = [(str(n), t if isinstance(t, str) else None) for n, t in data["new"]]
        answer = diff(old, new)
    sys.stdout.write(json.dumps(answer, separators=(",", ":")))
    sys.stdout.flush()
    return 0


# -- read back for the page ------------------------------------------------------------------------


def _token_classes() -> frozenset[str]:
    from pygments.token import STANDARD_TYPES

    return frozenset(STANDARD_TYPES.values())


def _lines(raw: Any, classes: frozenset[str]) -> list[list[tuple[str, str]]] | None:
    if not isinstance(raw, list):
        return None
    out = []
    for line in raw:
        if not isinstance(line, list):
            return None
        pieces = []
        for piece in line:
            if not (isinstance(piece, list) and len(piece) == 2 and all(isinstance(p, str) for p in piece)):
                return None
            pieces.append((piece[0] if piece[0] in classes else "", piece[1]))
        out.append(pieces)
    return out


def _file(raw: Any, classes: frozenset[str]) -> dict[str, Any] | None:
    lines = _lines(raw.get("lines"), classes) if isinstance(raw, dict) else None
    if lines is None or not isinstance(raw.get("name"), str):
        return None
    lexer = raw.get("lexer") if raw.get("lexer") in {a for a, _ in LANGUAGES.values()} else ""
    note = raw.get("note") if isinstance(raw.get("note"), str) else None
    return {"name": raw["name"], "language": str(raw.get("language", "")), "lexer": lexer, "lines": lines, "note": note}


def _change(raw: Any) -> dict[str, Any] | None:
    if not (isinstance(raw, dict) and isinstance(raw.get("name"), str) and isinstance(raw.get("lines"), list)):
        return None
    rows = [
        (r[0], r[1])
        for r in raw["lines"]
        if isinstance(r, list) and len(r) == 2 and r[0] in KINDS and isinstance(r[1], str)
    ]
    return {"name": raw["name"], "change": str(raw.get("change", "")), "lines": rows}


def shown(raw: Any) -> dict[str, Any] | None:
    """A stored view in the shape the page reads, or None when it is not one (of another format,
    damaged or edited): every piece is text, every class one of Pygments' own names."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("files"), list):
        return None
    classes = _token_classes()
    files = [_file(f, classes) for f in raw["files"]]
    found: dict[str, Any] = raw["diff"] if isinstance(raw.get("diff"), dict) else {}
    changes = [_change(f) for f in found.get("files") or [] if isinstance(found.get("files"), list)]
    if any(f is None for f in files) or any(c is None for c in changes):
        return None
    previous = raw.get("previous")
    if not (isinstance(previous, dict) and all(type(previous.get(k)) is int for k in ("id", "version"))):
        previous = None
    state = found.get("state")
    return {
        "files": files,
        "problem": raw["problem"] if isinstance(raw.get("problem"), str) else None,
        "previous": previous,
        "diff": {"state": state if state in ("ok", "too-large", "none") else "none", "files": changes},
    }


#: The kinds of a diff's line.
KINDS = frozenset({"add", "del", "hunk", "same"})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
