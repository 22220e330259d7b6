"""The issue list and the issue page in a real browser at 1400 and 1024 px: the window rule stated beside the
figures, the issue page's events and users over the list's window, no console error; screenshots in
tests/_artifacts/issue_figures."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from tests.api.live import serve
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land, sdk_event

pytestmark = pytest.mark.browser


def _timeout(ms: int) -> None:
    raise TimeoutError(f"timed out after {ms} ms")


def test_issue_figures_state_their_window(chromium, stores, org_factory) -> None:
    org = org_factory("Shots")
    rng = random.Random(3)
    now = datetime.now(UTC)
    payloads = []
    for _ in range(40):
        payload = sdk_event(lambda: _timeout(rng.randrange(1000, 9000)), user={"id": f"u{rng.randrange(5)}"})
        payload["timestamp"] = (now - timedelta(hours=rng.uniform(0.1, 20 * 24))).isoformat()
        payloads.append(payload)
    land(org["org_id"], org["project_id"], payloads)
    out = shots_dir("issue_figures")
    out.mkdir(parents=True, exist_ok=True)
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    with serve(stores) as server:
        # One page for both widths: a new context would load and compile plotly.js again (its cache is
        # the context's own) and sign in again, CPU for no check; each page is loaded anew at its width.
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        watch_errors(page, errors)
        sign_in_page(page, server, org["email"], PASSWORD)
        for width in (1400, 1024):
            page.set_viewport_size({"width": width, "height": 1000})
            errors.clear()  # each width's own errors, asserted below
            page.goto(f"{server}{base}?range=14d")
            rule = page.locator("#window-rule").inner_text()
            assert "last 14 days (rolling, to the minute)" in rule and "the issue's own" in rule
            page.screenshot(path=str(out / f"issue-list-{width}.png"), full_page=True)
            page.click("a.issue-title")
            page.wait_for_selector("#window-figures")
            shown = page.locator("#window-figures").inner_text()
            assert "Events (14d)" in shown and "rolling" in shown
            page.wait_for_selector("#chart .plot .main-svg")
            page.screenshot(path=str(out / f"issue-page-{width}.png"), full_page=False)
            assert errors == []
        page.close()
