"""The process's shared chromium (``chromium`` in ``tests/conftest.py``): a test gets a browser with no
context of an earlier test's, and the tests after a browser test run ``asyncio`` code as if no browser were
started."""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.browser


def test_a_browser_test_opens_pages(chromium) -> None:
    page = chromium.new_page()
    page.set_content("<p id=x>shared</p>")
    assert page.locator("#x").inner_text() == "shared"
    chromium.new_context()  # left open on purpose: the fixture closes it


def test_the_next_browser_test_gets_none_of_its_contexts(chromium) -> None:
    assert chromium.contexts == []
    assert chromium.is_connected()


def test_asyncio_runs_after_a_browser_test() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert asyncio.run(answer()) == 42
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()


def test_a_browser_test_runs_asyncio_before_its_first_page(chromium) -> None:
    async def answer() -> int:
        return 7

    assert asyncio.run(answer()) == 7  # seeding data, a pipeline run: before the browser is used
    page = chromium.new_page()
    page.set_content("<p id=x>then the page</p>")
    assert page.locator("#x").inner_text() == "then the page"


def test_a_test_may_still_start_its_own_playwright() -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser import launch

    with sync_playwright() as pw:
        browser = launch(pw)
        assert browser.new_page().evaluate("1 + 1") == 2
        browser.close()


def test_the_shared_browser_serves_again_after_asyncio(chromium) -> None:
    assert chromium.new_page().evaluate("2 * 21") == 42


def test_a_test_that_loses_the_browser(chromium) -> None:
    chromium.close()  # as a crash of chromium would leave it
    assert not chromium.is_connected()


def test_the_next_test_gets_a_new_browser(chromium) -> None:
    assert chromium.is_connected()
    assert chromium.new_page().evaluate("'again'") == "again"
