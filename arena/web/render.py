"""The one place HTML is made: a Jinja2 environment that escapes every value.

Every page of arena (the report's pages and charts, the replay viewer, the
browser seat) is a template in ``arena/web/templates/``, rendered by
:func:`render`. The environment escapes every value put into a template
(``autoescape`` on for every template name, not only ``.html``), and a name
the template does not get is an error (``StrictUndefined``), never an empty
string. Data meets a script only through :func:`embed_json` (the ``tojson``
filter): JSON that cannot end its ``<script>`` element. Numbers are put into
markup through the ``num`` filter, which formats real numbers only.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from ..trust.text import escape

#: Marks a file an arena command wrote, so it may write it again (and no other file).
GENERATOR = Markup('<meta name="generator" content="arena view">')

#: Shown for a number that is missing (None).
DASH = "\u2013"

#: JSON characters that could end a ``<script>`` element, open an HTML comment or
#: end a JavaScript line (U+2028, U+2029 in older engines), and their escapes.
_SCRIPT_ESCAPES = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&'\u2028\u2029"})


def embed_json(data: Any) -> Markup:
    """JSON safe to put inside a ``<script>`` element or a JS file: ``<``, ``>``, ``&``, ``'``
    and the JS line separators are written as ``\\uXXXX`` escapes, so no string in the data
    can close the element (``</script>``) or open a comment (``<!--``). Every string in the
    data (keys too) is first made printable as templates' text is (:func:`_shown`: a name's
    bidi override or control character arrives as a visible escape, the same on every page),
    and the JSON is ASCII, so a published file shown in a terminal (``cat``, ``grep``) prints
    no control sequence either."""
    text = json.dumps(_shown_data(data), ensure_ascii=True, separators=(",", ":"))
    return Markup(text.translate(_SCRIPT_ESCAPES))


def _shown_data(data: Any) -> Any:
    """``data`` with every string made printable (:func:`arena.trust.text.escape`); arena's own
    data for a page: lists, tuples and dicts of text, numbers, booleans and None."""
    if isinstance(data, str):
        return escape(data)
    if isinstance(data, dict):
        return {(escape(k) if isinstance(k, str) else k): _shown_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_shown_data(v) for v in data]
    return data


def real(value: Any) -> float | None:
    """``value`` as a float when it is a finite real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        out = float(value)
    except OverflowError:  # an int past the float range
        return None
    return out if math.isfinite(out) else None


def num(value: Any, spec: str = "", missing: str = DASH) -> str:
    """A number for the page: a real number formatted with ``spec`` (``".2f"``, ``"g"``...),
    ``missing`` for None, anything else as its text (escaped by the template like any text)."""
    if value is None:
        return missing
    if real(value) is not None:
        return format(value, spec)
    try:
        return str(value)
    except ValueError:  # an int of more than 4300 digits (or a list holding one)
        return "(a value too long to show)"


def _shown(value: Any) -> Any:
    """Every value a template prints, before HTML escaping: text (not markup arena made) with
    its unprintable characters as visible escapes (:func:`arena.trust.text.escape`: controls,
    bidi overrides, lone surrogates), so that no page shows reordered text or holds a
    terminal control sequence a reader of the published file would print."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return escape(value)
    return value


def _asset(name: str) -> Markup:
    """One of arena's own static files (CSS, JavaScript) to inline as it is: package data, not input."""
    return Markup(resources.files("arena.web").joinpath("static", name).read_text(encoding="utf-8"))


@cache
def environment() -> Environment:
    """The environment every page is rendered with."""
    env = Environment(
        loader=PackageLoader("arena.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_shown,
    )
    env.filters["tojson"] = embed_json
    env.filters["num"] = num
    env.globals["asset"] = _asset
    env.globals["generator"] = GENERATOR
    return env


def render(template: str, /, **context: Any) -> str:
    """``template`` rendered with ``context``; every value escaped on the way in."""
    return environment().get_template(template).render(**context)


def fragment(template: str, /, **context: Any) -> Markup:
    """A rendered template to put into another one (a chart into a page): already escaped."""
    return Markup(render(template, **context))
