"""Shared by the browser tests: how to start Debian's chromium on this machine, watch a page's errors and sign
in.

`playwright install` cannot download a browser here, so the tests drive the system's `/usr/bin/chromium`.
The flags keep it headless and stop its background connections, which a closed network refuses.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

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


@dataclass
class SharedChromium:
    """One chromium of a test process (the ``chromium`` fixture of ``tests/conftest.py``) and the event loop
    of the Playwright driver connection it is driven through."""

    playwright: Playwright
    browser: Browser
    loop: asyncio.AbstractEventLoop


@contextmanager
def shared_chromium() -> Iterator[SharedChromium]:
    """Start Playwright and one chromium for a whole test process; stopped when the block ends.

    Playwright's sync API marks its event loop as the thread's running loop between two calls (and needs the
    mark: some calls, such as ``page.on``, schedule their work on "the running loop"), so while it is started
    ``asyncio.run`` (and another ``sync_playwright()``) refuses to run on that thread. The mark is taken off
    here and put on by :func:`lend` only from a test's first use of the browser to its end: the code of a test
    before its first page (seeding data, a pipeline run) and every test without a browser run as if no
    Playwright were started, as they did when each test started its own Playwright for its pages."""
    from playwright.sync_api import sync_playwright

    manager = sync_playwright()
    pw = manager.start()
    try:
        shared = SharedChromium(pw, launch(pw), asyncio.get_running_loop())
    except BaseException:
        pw.stop()
        raise
    asyncio._set_running_loop(None)
    try:
        yield shared
    finally:
        asyncio._set_running_loop(shared.loop)
        try:
            shared.browser.close()
        finally:
            pw.stop()
            asyncio._set_running_loop(None)


class _BrowserOnFirstUse:
    """The shared browser, marking Playwright's loop running on the thread at the test's first use of it."""

    def __init__(self, shared: SharedChromium) -> None:
        self._shared = shared

    def __getattr__(self, name: str) -> Any:
        asyncio._set_running_loop(self._shared.loop)
        return getattr(self._shared.browser, name)


@contextmanager
def lend(shared: SharedChromium) -> Iterator[Browser]:
    """The shared chromium for one test: every context (and page) the test opened is closed after it, so the
    next test starts with none of its cookies or pages."""
    asyncio._set_running_loop(shared.loop)
    try:
        if not shared.browser.is_connected():  # an earlier test's chromium crashed: this test gets a new one
            shared.browser = launch(shared.playwright)
        before = set(shared.browser.contexts)
    finally:
        asyncio._set_running_loop(None)
    try:
        yield cast("Browser", _BrowserOnFirstUse(shared))
    finally:
        asyncio._set_running_loop(shared.loop)
        try:
            for context in shared.browser.contexts:
                if context not in before:
                    context.close()
        finally:
            asyncio._set_running_loop(None)


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
