"""The INP page in a real browser against a real uvicorn server, with the demo's data: demo page loads of
every browser and the shop's slow interactions as the demo sends them (demo/browser_interactions.py: the
cart's first-party handler, the chat widget's third-party timer from the demo's second host). The page
shows the parts per page and target, the handler ranked first in processing and the widget as a third party
in input delay, the parties per page, and names the browsers that send no INP. Screenshots at 1024 and 1440
px (tests/_artifacts/inp, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from demo import browser_pageloads
from demo.browser_interactions import interactions
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, RELEASES, land_demo_traffic
from tests.stacklens.performance.inp import inp_seed
from tests.stacklens.performance.perf_seed import mark_built

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("inp")
ORIGIN = "http://127.0.0.1:8000"


def _demo_interactions(org: dict, stores) -> None:
    rng = random.Random(69)
    now = datetime.now(UTC)
    spans = []
    for n in range(240):
        at = now - timedelta(hours=47) + timedelta(minutes=11 * n)
        load = browser_pageloads.pageload(rng, ORIGIN, RELEASES[-1], "production", at, None, False)
        spans += interactions(load, ORIGIN)
    client = get_warehouse(stores)
    inp_seed.store(client, org["org_id"], org["project_id"], spans)
    inp_seed.refresh(client, now - timedelta(days=3), now + timedelta(hours=1))
    mark_built(client, "pageload_facts")  # as the run after these arrivals does: nothing left to build


def test_the_inp_page_with_the_demos_data(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"], days=2, per_day=30)
    _demo_interactions(org, stores)
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{base}/inp?range=7d")
    page.wait_for_selector("#plot-parts .main-svg")
    page.wait_for_selector("#plot-scripts .main-svg")
    assert page.locator(".perf-tabs a.active").inner_text() == "INP causes"
    cart = page.locator("#inp-parts tr.page-row[data-page='/cart']")
    assert "Processing" in cart.inner_text()
    target = page.locator("#inp-parts tr.target-row[data-page='/cart'][data-target='button#add-to-cart']")
    assert "click" in target.inner_text() and " ms" in target.inner_text()
    scripts = page.locator("#inp-scripts tbody tr")
    first = scripts.nth(0).inner_text()
    assert "shop.js" in first and "first party" in first and "Processing" in first, first
    widget = page.locator("#inp-scripts tbody tr[data-party='third']").first.inner_text()
    assert "widget.js" in widget and "Input delay" in widget, widget
    assert "%" in page.locator("#inp-parties tr[data-page='/cart']").inner_text()
    own_hosts = page.locator("#inp-own-hosts-link").get_attribute("href") or ""
    assert own_hosts.endswith(f"/projects/{org['project']}/settings#first-party-hosts"), own_hosts
    browsers = page.locator("#inp-browsers").inner_text()
    assert "no INP from Firefox" in browsers and "no INP from Safari" in browsers, browsers
    assert page.evaluate("window.__csp") == []
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"inp-{width}.png"), full_page=True)
    page.goto(f"{base}/inp?range=7d&page=/nowhere")
    assert "No interactions reported" in page.locator("#inp-empty").inner_text()
    page.screenshot(path=str(SHOTS / "inp-empty-1440.png"), full_page=True)
    assert errors == []
