"""Everything arena prints is terminal-safe, whoever wrote the text.

Every command runs with ``sys.stdout`` and ``sys.stderr`` behind :class:`SafeStream`: a
write whose text holds a character a terminal would act on (ESC and every other control
character, C1 controls, bidi overrides, lone surrogates: what :func:`arena.trust.text.escape`
makes visible) is written with those characters as visible escapes. Line ends (``\\n``) and
the carriage return of a progress bar (``\\r``) pass as they are. So a name, path, game id
or message that reaches a ``print`` without its own escaping (a file name in a "wrote ..."
line, the command line in a "resume with" hint) still prints no control sequence: the class
of hole, closed at the one place all output passes. Text that is already escaped (every
table, log line and error message) is printable and passes unchanged (one
``str.isprintable`` test a write).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..trust.text import escape

#: What a write may hold besides printable text: line ends and a progress bar's return.
_KEPT = re.compile(r"([\n\r])")


def safe_text(text: str) -> str:
    """``text`` with every character a terminal would act on made visible, line ends kept."""
    if text.isprintable():
        return text
    return "".join(part if part in ("\n", "\r") else escape(part) for part in _KEPT.split(text))


class SafeStream:
    """A text stream that writes :func:`safe_text` of what it is given; everything else
    (``flush``, ``fileno``, ``isatty``, ``encoding``...) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(safe_text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def safe_output() -> Iterator[None]:
    """Run a command with terminal-safe ``sys.stdout`` and ``sys.stderr`` (restored after)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
