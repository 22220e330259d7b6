"""The issue page as a new user reads it, in Debian's chromium: breadcrumbs filtered by category prefix and
shown in words and one time format, environment information filled, an events chart with every bucket, totals
that say what they count, and only the status moves the issue allows. Screenshots go to tests/_artifacts/."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts" / "dashboards"
SAFARI = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"


def _browser_error(seconds_ago: float) -> dict:
    now = time.time() - seconds_ago
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "level": "error",
        "timestamp": now,
        "exception": {
            "values": [
                {
                    "type": "TypeError",
                    "value": "cart.items is undefined",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "https://shop.example/static/app.js",
                                "function": "renderCart",
                                "lineno": 12,
                                "colno": 5,
                                "in_app": True,
                            }
                        ]
                    },
                }
            ]
        },
        "breadcrumbs": [
            {"timestamp": now - 4, "category": "navigation", "data": {"from": "/", "to": "/cart"}},
            {"timestamp": now - 2, "category": "ui.click", "message": "button.add-to-cart"},
            {"timestamp": now - 1, "category": "console", "level": "warning", "message": "price missing"},
        ],
        "request": {"url": "https://shop.example/cart", "headers": {"User-Agent": SAFARI}},
        "contexts": {
            "browser": {"name": "Safari", "version": "18.1"},
            "os": {"name": "Mac OS X", "version": "14.6"},
        },
        "sdk": {"name": "sentry.javascript.browser", "version": "11.12.0"},
    }


def test_issue_page_reads_right(chromium, server, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    # Two events nine days apart: sparse data that must still read as a time line.
    land(org["org_id"], org["project_id"], [_browser_error(9 * 86400), _browser_error(60)])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    expect(page.locator("#rate-limits h2")).to_have_text("Rate limits")
    expect(page.locator("#limit-events")).to_have_text("60,000")
    expect(page.locator("#refusals")).to_contain_text("None: no request was refused")
    page.screenshot(path=str(ARTIFACTS / "organization_rate_limits.png"), full_page=True)
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues")
    expect(page.locator("thead")).to_contain_text("Events (14d)")
    page.click("a.issue-title")
    page.wait_for_selector("#breadcrumbs")
    page.wait_for_load_state("load")  # the figures are drawn by then (static/app.js)

    expect(page.locator("#issue-totals")).to_have_text("all time: 2 events · 0 users")
    expect(page.locator("#status-actions button[value=reopen]")).to_have_count(0)
    expect(page.locator("#status-actions button[value=resolve]")).to_have_count(1)

    rows = page.locator("tr.crumb")
    expect(rows).to_have_count(3)
    expect(page.locator("tr.crumb[data-category=navigation] .crumb-message")).to_have_text("/ → /cart")
    times = rows.locator("td:first-child").all_inner_texts()
    assert all(len(t) == 23 and t[4] == "-" and t[10] == " " for t in times), times
    page.select_option("#crumb-category", "ui")
    expect(page.locator("tr.crumb:visible")).to_have_count(1)
    expect(page.locator("tr.crumb:visible .crumb-message")).to_have_text("button.add-to-cart")
    page.select_option("#crumb-category", "")

    environment = page.locator("#environment").inner_text()
    assert "Safari 18.1" in environment and "Mac OS X 14.6" in environment, environment

    # Every day of the 14-day range is a bar (zero where nothing happened), each a day wide.
    bars = page.evaluate(
        "() => { const p = document.querySelector('.plot .js-plotly-plot') || document.querySelector('.js-plotly-plot');"
        " return p && p.data ? p.data[0].y : null; }"
    )
    assert bars is not None and len(bars) >= 14 and sum(bars) == 2 and bars.count(0) >= 12, bars
    page.screenshot(path=str(ARTIFACTS / "issue_page_first_hour.png"), full_page=True)

    page.click("#status-actions button[value=resolve]")
    expect(page.locator("#status-actions button[value=reopen]")).to_have_count(1)
    expect(page.locator("#status-actions button[value=resolve]")).to_have_count(0)
    assert not errors, errors
