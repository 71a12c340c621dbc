"""Contestant-controlled text made safe to show: terminal escaping and clean names.

Everything a bot controls (its name, file name, ``say`` text, printed output,
fault details, exception messages) may hold escape sequences (CSI colour and
cursor codes, OSC 52 clipboard writes, OSC 8 links), C1 controls, bidi
overrides that reorder a line, newlines that forge a log line, or lone
surrogates that no terminal encoding can print. :func:`escape` turns every
such character into a visible ``\\x1b`` / ``\\u202e`` / ``\\n`` escape, so the text
shows as one inert line; :func:`clean_name` also bounds the length and never
gives an empty name. Records on disk keep the exact text (JSON escapes it);
only what is printed goes through here.
"""

from __future__ import annotations

__all__ = ["escape", "clean_name", "storable", "MAX_NAME"]

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
