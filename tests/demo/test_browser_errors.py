"""The demo's JavaScript errors and sessions (demo/browser_errors.py): an error event of its release, and the
session of a page load updated once the page's first error is reported."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from demo.browser import ReleaseShape
from demo.browser_errors import js_error, page_session, session_after_error
from demo.browser_pageloads import pageload

RELEASE = ReleaseShape("shop@1.2.0", 455_000, False, 0.95)
WHEN = datetime(2026, 11, 2, 10, tzinfo=UTC)


def test_an_error_counts_in_the_session_of_its_page_load() -> None:
    load = pageload(random.Random(1), "https://shop.example", RELEASE, "production", WHEN, "u1", False)
    error = js_error(random.Random(2), "https://shop.example", RELEASE, "production", WHEN, "u1")
    assert error["release"] == "shop@1.2.0" and error["exception"]["values"][0]["type"]
    session = page_session(load, RELEASE, "production", WHEN, "u1")
    assert (session["init"], session["errors"], session["attrs"]["release"]) == (True, 0, "shop@1.2.0")
    after = session_after_error(session, error, RELEASE)
    assert (after["sid"], after["init"], after["errors"]) == (session["sid"], False, 1)
    assert after["status"] in ("ok", "crashed")
