"""The issue page in Debian's chromium, as a new user reads it: the culprit first in the header, controls
found by their labels, extra data as keys and values, a breadcrumb filter that matches nothing saying so,
related issues; and the performance page's empty state with the project's DSN on the server's own port.
Screenshots go to tests/_artifacts/issue_detail (or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import re

import dagster as dg
import pytest

from pipelines.assets.issues import related_issues
from pipelines.resources import resources_for
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land, sdk_event

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("issue_detail")


def _checkout() -> None:
    cart = {"sku": "mug-42", "quantity": 3}
    raise ValueError(f"cannot reserve {cart['sku']}")


def _payment() -> None:
    raise KeyError("card-token")


def test_issue_page_in_the_browser(chromium, server, org_factory, stores) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    crumbs = [
        {"category": "navigation", "message": "/ → /cart"},
        {"category": "ui.click", "message": "button.checkout"},
        {"category": "http", "message": "POST /api/reserve → 409"},
    ]
    ann = {"id": "u-ann"}
    rows = land(
        org["org_id"],
        org["project_id"],
        [
            # The SDK marks no frame (a service started outside its source tree): culprit and badges inferred.
            sdk_event(
                _checkout,
                user=ann,
                crumbs=crumbs,
                extra={"cart": {"sku": "mug-42", "quantity": 3, "coupons": []}, "attempt": 2},
                release="shop@2.1.0",
                environment="production",
                project_root="/nonexistent",
            ),
            sdk_event(_payment, user=ann, release="shop@2.1.0", environment="production"),
        ],
    )
    result = dg.materialize([related_issues], resources={"warehouse": resources_for(stores)["warehouse"]})
    assert result.success
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"
    page.goto(f"{base}/issues/{rows[0]['issue_id']}")
    page.wait_for_selector("#breadcrumbs")

    expect(page.locator("#issue-meta")).to_have_text(
        re.compile(
            rf"^_checkout in {re.escape(_checkout.__module__)} · unresolved · all time: 1 event · 1 user"
        )
    )
    # Every control is found by the words next to it.
    for label in ("Ignore", "N more events", "Date (UTC)", "Share", "Time range", "Link expires after"):
        expect(page.get_by_label(label, exact=True)).to_have_count(1)
    expect(page.locator("#stack .frame.in-app").first).to_contain_text("_checkout")
    expect(page.locator("#extra-data")).to_contain_text("sku")
    expect(page.locator("#extra-data")).to_contain_text("mug-42")
    assert "keys}" not in page.locator("#extra").inner_text()
    expect(page.locator("#related")).to_contain_text("also same time window, same user")
    page.screenshot(path=str(SHOTS / "issue_detail.png"), full_page=True)

    # A filter that matches nothing says so, naming the filter; clearing it brings the rows back.
    page.fill("#crumb-search", "refund")
    expect(page.locator("tr.crumb:visible")).to_have_count(0)
    expect(page.locator("#crumbs-none")).to_have_text("No breadcrumbs match “refund”.")
    page.select_option("#crumb-category", "ui")
    expect(page.locator("#crumbs-none")).to_have_text("No breadcrumbs match category ui and “refund”.")
    page.locator("#breadcrumbs").screenshot(path=str(SHOTS / "issue_detail_breadcrumbs_none.png"))
    page.fill("#crumb-search", "")
    expect(page.locator("tr.crumb:visible")).to_have_count(1)
    expect(page.locator("#crumbs-none")).to_be_hidden()

    # The performance page's empty state gives the project's DSN on this server's address, key masked.
    page.goto(f"{base}/performance")
    port = server.rsplit(":", 1)[1]
    expect(page.locator("#perf-empty pre")).to_contain_text(
        re.compile(rf"@127\.0\.0\.1:{port}/{org['project_id']}\"")
    )
    expect(page.locator("#perf-empty pre")).to_contain_text("stacklens_app_…")
    page.locator("#perf-empty").screenshot(path=str(SHOTS / "performance_empty_state_dsn.png"))
    assert not errors, errors
