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
