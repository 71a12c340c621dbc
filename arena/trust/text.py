"""Contestant-controlled text made safe to show: terminal escaping, clean names, and
the rules of every output format (CSV, markdown, JSON, tables), owned here alone.

Everything a bot controls (its name, file name, ``say`` text, printed output,
fault details, exception messages) may hold escape sequences (CSI colour and
cursor codes, OSC 52 clipboard writes, OSC 8 links), C1 controls, bidi
overrides that reorder a line, newlines that forge a log line, or lone
surrogates that no terminal encoding can print. :func:`escape` turns every
such character into a visible ``\\x1b`` / ``\\u202e`` / ``\\n`` escape, so the text
shows as one inert line; :func:`clean_name` also bounds the length and never
gives an empty name. Records on disk keep the exact text (JSON escapes it);
only what is printed goes through here.

Each output format gets its reader's rule (docs/RULINGS.md, rulings 52 and 53):
:func:`to_csv` / :func:`csv_cell` (no cell a spreadsheet evaluates), :func:`md_cell`
and :func:`render_table` (no forged column or rendered markup; every terminal cell
escaped), :func:`to_json` (ASCII, exact, never ``NaN``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "escape",
    "clean_name",
    "storable",
    "MAX_NAME",
    "csv_cell",
    "to_csv",
    "md_cell",
    "render_table",
    "safe_line",
    "to_json",
    "FORMULA_START",
]

#: Longest name shown (characters, after escaping).
MAX_NAME = 40

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def _visible(ch: str) -> str:
    short = _SHORT.get(ch)
    if short:
        return short
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape(text: object, limit: int | None = None) -> str:
    """``text`` with every unprintable or line-breaking character as a visible escape.

    Escaped are exactly the characters ``str.isprintable`` rejects: Unicode "Other"
    (controls C0, DEL and C1; format characters such as bidi overrides and isolates,
    zero-width joiners, the BOM; lone surrogates; private-use and unassigned code
    points) and "Separator" other than the ASCII space (line and paragraph
    separators, no-break and other odd spaces). Printable text (letters of any script,
    punctuation, spaces, suit symbols) is kept as it is. With ``limit``, the result is
    cut to about that many characters, ending in ``...``. Never raises: a non-str is
    shown through ``str`` (or ``repr``).
    """
    if type(text) is not str:
        try:
            text = str(text)
        except Exception:  # noqa: BLE001 - a broken __str__ must not stop the display
            text = object.__repr__(text)
    assert isinstance(text, str)
    if text.isprintable() and (limit is None or len(text) <= limit):
        return text  # the common case: nothing to escape
    out: list[str] = []
    used = 0
    for ch in text:
        piece = ch if ch.isprintable() else _visible(ch)
        if limit is not None and used + len(piece) > limit:
            out.append("...")
            break
        out.append(piece)
        used += len(piece)
    return "".join(out)


def clean_name(name: object, fallback: str = "bot", limit: int = MAX_NAME) -> str:
    """A name fit to show anywhere: printable (unsafe characters escaped, runs of
    spaces collapsed), at most ``limit`` characters, never empty (then ``fallback``)."""
    text = escape(name if isinstance(name, str) else ("" if name is None else str(name)))
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return text or fallback


def storable(text: str) -> str:
    """``text`` encodable as UTF-8 (for SQLite and JSON files): lone surrogates become
    ``\\udcxx`` escapes, everything else is kept."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join(_visible(ch) if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


# -- output formats -------------------------------------------------------------
#
# Every format the commands print goes through the functions below, so that a name,
# author or value that a contestant (or a hostile database) controls reaches its
# reader inert: a terminal gets no control sequence, a spreadsheet no formula, a
# markdown renderer no extra column, link or tag, a JSON parser valid JSON.

#: Leading characters that make a spreadsheet read a CSV cell as a formula (OWASP's
#: list: ``=``, ``+``, ``-``, ``@``, TAB, CR; also LF and the full-width forms some
#: spreadsheets fold to ASCII).
FORMULA_START = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")

#: ASCII punctuation a markdown table cell escapes with a backslash: the cell separator
#: ``|``, the escape character itself, and what starts inline markup (code, emphasis,
#: strike-through, links and images, raw HTML and autolinks, entities, math).
MD_SPECIAL = frozenset("\\|`*_~[]<>&$")

#: The deepest JSON document :func:`to_json` writes (a hostile database's settings may nest
#: thousands deep; a recursion error is no way to say so).
MAX_JSON_DEPTH = 100

#: The names of the formats :func:`render_table` draws.
TABLE_FORMATS = {"table": "simple", "markdown": "github"}


def _is_number(value: object) -> bool:
    """A number the program computed (not text that looks like one; not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as the text or number it is.

    Numbers stay numbers (a computed ``-3`` is written ``-3``); ``None`` is an empty cell;
    anything else is text: terminal-escaped (:func:`escape`), and when it starts with a
    formula character (:data:`FORMULA_START`, after any leading spaces) it gets a leading
    ``'``, which spreadsheets show as text and do not evaluate. Non-finite floats are text."""
    if value is None:
        return ""
    if _is_number(value):
        return value
    text = escape(value)
    if text.lstrip()[:1] in FORMULA_START or text[:1] in FORMULA_START:
        return "'" + text
    return text


def to_csv(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A CSV table (header row first) with every cell made safe by :func:`csv_cell`; the
    ``csv`` module quotes cells holding commas, quotes or line breaks."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(h) for h in headers])
    writer.writerows([csv_cell(c) for c in row] for row in rows)
    return out.getvalue().rstrip("\n")


def md_cell(value: object) -> str:
    """Text for one markdown table cell (or a heading): terminal-escaped, so that no line
    break ends the row, then every :data:`MD_SPECIAL` character backslash-escaped (but an
    ``_`` inside a word), so that no ``|`` adds a column and no markup, link, tag or entity
    is rendered: the reader sees the text as it is."""
    text = escape(value)
    if not any(ch in MD_SPECIAL for ch in text):
        return text
    out = []
    for i, ch in enumerate(text):
        # An ``_`` between letters or digits (``my_bot``) starts no emphasis: kept as it is.
        inner = ch == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
        out.append("\\" + ch if ch in MD_SPECIAL and not inner else ch)
    return "".join(out)


def render_table(
    rows: Iterable[Sequence[object]],
    headers: Sequence[object],
    fmt: str = "table",
    *,
    floatfmt: str = "g",
    colalign: Sequence[str] | None = None,
) -> str:
    """A table for a terminal (``fmt`` ``table``) or markdown (``markdown``), drawn by
    tabulate, with every text cell and header made safe (:func:`escape`; :func:`md_cell`
    for markdown). Numbers stay numbers (aligned, ``floatfmt``); text is never read as a
    number, so a name such as ``1e5`` is shown as it is."""
    from tabulate import tabulate

    if fmt not in TABLE_FORMATS:
        raise ValueError(f"unknown table format {fmt!r}")
    safe = md_cell if fmt == "markdown" else escape
    body = [[c if c is None or _is_number(c) else safe(c) for c in row] for row in rows]
    width = max([len(headers), *(len(r) for r in body)])
    text_columns = [i for i in range(width) if any(i < len(r) and isinstance(r[i], str) for r in body)]
    return tabulate(
        body,
        headers=[safe(h) for h in headers],
        tablefmt=TABLE_FORMATS[fmt],
        floatfmt=floatfmt,
        disable_numparse=text_columns or False,
        colalign=colalign,
    )


def safe_line(text: object, fmt: str = "table") -> str:
    """A line of text above or below a table: :func:`md_cell` in markdown, else :func:`escape`."""
    return md_cell(text) if fmt == "markdown" else escape(text)


def _plain(value: object, depth: int) -> object:
    """``value`` as JSON-ready data: non-finite floats as ``null``, tuples as lists, keys as
    text, any other object as its text. :raises ValueError: nested too deeply."""
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"a value nested more than {MAX_JSON_DEPTH} deep")
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k if isinstance(k, str) else escape(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    return escape(value)


def to_json(doc: object, indent: int | None = 2) -> str:
    """``doc`` as JSON that any parser reads and any terminal shows inert: ASCII only (every
    other character, lone surrogates and controls included, as a ``\\uXXXX`` escape, so the
    text round-trips exactly), no ``NaN`` or ``Infinity`` (``null``). :raises ValueError:
    when ``doc`` nests more than :data:`MAX_JSON_DEPTH` deep."""
    import json

    return json.dumps(_plain(doc, 0), indent=indent, ensure_ascii=True, allow_nan=False)
