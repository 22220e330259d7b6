"""Shared by the browser tests: how to start Debian's chromium on this machine, watch a page's errors and sign
in.

`playwright install` cannot download a browser here, so the tests drive the system's `/usr/bin/chromium`.
The flags keep it headless and stop its background connections, which a closed network refuses.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def shots_dir(topic: str) -> Path:
    """Where a browser test writes its screenshots: ``$STACKLENS_SHOTS_DIR``, else
    ``tests/_artifacts/<topic>`` (ignored by git). Created on use."""
    chosen = os.environ.get("STACKLENS_SHOTS_DIR")
    return Path(chosen) if chosen else Path(__file__).resolve().parent / "_artifacts" / topic


def launch(pw: Playwright) -> Browser:
    """Debian's chromium, started with :data:`CHROMIUM_ARGS`."""
    return pw.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)


def watch_errors(page: Page, errors: list[str], *, with_url: bool = False, page_errors: bool = True) -> None:
    """Append to ``errors`` every console error of ``page`` and, with ``page_errors``, every uncaught
    exception; ``with_url`` puts the page's address before each (``"<url>: <text>"``)."""
    if with_url:
        page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        if page_errors:
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    else:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        if page_errors:
            page.on("pageerror", lambda e: errors.append(str(e)))


def sign_in_page(page: Page, server: str, email: str, password: str, landing_url: str | None = None) -> None:
    """Sign in through ``{server}/login`` (the primary submit button), then wait for ``landing_url`` if
    given."""
    page.goto(f"{server}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit].primary")
    if landing_url is not None:
        page.wait_for_url(landing_url)
