"""Whole numbers from untrusted text: the one parser of every integer a request (or a person at a
terminal) gives.

``str.isdigit`` is true of ``²`` (which ``int`` refuses: an exception where a refusal was meant)
and of ``٥٠`` or ``５`` (which ``int`` reads as 50 and 5: another spelling of a number, past any
check made on the text); ``int`` also takes ``+5``, `` 5 `` and ``5_0``. :func:`whole_number`
takes ASCII digits only, of a bounded length, within the bounds its caller gives.
"""

from __future__ import annotations

#: The largest number the parser reads by default: SQLite's INTEGER is 64-bit (a bigger id is no row's).
MAX_WHOLE = 2**63 - 1

_DIGITS = frozenset("0123456789")


def whole_number(value: object, low: int = 0, high: int = MAX_WHOLE, *, given: str = "any") -> int | None:
    """``value`` as an int in ``low..high``, or None. ``given`` says what the request carries: "text"
    (a path, a query, a form field, a header: a ``str`` of ASCII digits only, no sign, space or
    underscore, at most as many digits as ``high`` has), "json" (a JSON number: an ``int``, never a
    ``bool`` nor a string of digits), or "any" (either)."""
    if isinstance(value, str) and given != "json":
        if not value or len(value) > len(str(high)) or not _DIGITS.issuperset(value):
            return None
        value = int(value)
    elif given == "text" or isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if low <= value <= high else None
