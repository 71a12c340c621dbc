"""Debian's Chromium driven by Playwright, as the browser tests open it (``browser`` fixture in
``tests/conftest.py``). Playwright's own browser download does not work on the project's machines."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = "/usr/bin/chromium"
#: Chromium's switches: headless, and none of the background connections a closed network refuses.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: The screen sizes the pages are looked at in.
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@contextmanager
def chromium() -> Iterator[Any]:
    """A Playwright browser on Debian's Chromium (a missing Chromium fails, never skips: .ci/run installs it)."""
    if not os.path.exists(CHROMIUM):
        raise AssertionError(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def seat_step(suit: int = 1) -> str:
    """A page's function that plays one click at a person's seat, putting whenever it may (a game that
    moves on): the suit button ``suit`` for a jack, a playable card, else finish, else draw; what it
    did ('suit', 'put', 'jack', 'finish', 'draw'), or 'wait'."""
    return (
        "() => {\n"
        "  const suits = document.getElementById('suits');\n"
        f"  if (!suits.hidden) {{ suits.querySelectorAll('.suit')[{suit}].click(); return 'suit'; }}\n"
        "  const playable = document.querySelector('.seat.you .hand .card.playable');\n"
        "  if (playable) { playable.click(); return suits.hidden ? 'put' : 'jack'; }\n"
        "  const finish = document.getElementById('finish'), draw = document.getElementById('draw');\n"
        "  if (!finish.disabled) { finish.click(); return 'finish'; }\n"
        "  if (!draw.disabled) { draw.click(); return 'draw'; }\n"
        "  return 'wait';\n"
        "}"
    )
