"""Every performance page in a real browser (Debian's chromium through Playwright) against a real uvicorn
server, on demo traffic (demo.browser page loads of five releases, one regressing, over three weeks, from
Chrome, Firefox and Safari) landed through the ingest normaliser: each chart holds data, no console error
and no CSP violation occurs, and a screenshot of each page is saved (tests/_artifacts/performance, or
STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import json
import random
import re
import socket
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from demo import browser, browser_pageloads
from stacklens.ingest.fields import Origin
from stacklens.ingest.transactions import spans_rows, transaction_row
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.stacklens.performance.perf_seed import build_facts

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("performance")
RELEASES = [
    browser.ReleaseShape("shop@1.0.0", 410_000, True, 1.0),
    browser.ReleaseShape("shop@1.1.0", 430_000, True, 1.0),
    browser.ReleaseShape("shop@1.2.0", 455_000, False, 0.95),
    browser.ReleaseShape("shop@1.3.0", 780_000, True, 1.35),
    browser.ReleaseShape("shop@1.4.0", 520_000, False, 1.05),
]
# Collects CSP violations from the first moment of every document (Playwright injects it outside the page's
# CSP).
CSP_PROBE = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)
FIGURES_HOLD_DATA = """() => Array.from(document.querySelectorAll('[data-figure]')).map(el => ({
    id: el.id, traces: (el.data || []).length,
    points: (el.data || []).reduce((n, t) => n + ((t.y || t.x || []).length || 0), 0)}))"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def land_demo_traffic(
    settings: Settings,
    org_id: int,
    project_id: int,
    days: int = 21,
    per_day: int = 18,
    skip: frozenset[int] = frozenset(),
    build: bool = True,
) -> list[datetime]:
    """Demo page loads, release by release over ``days`` (none on the days numbered in ``skip``),
    normalised and inserted as ingest stores them; the times of the page loads."""
    rng = random.Random(15)
    now = datetime.now(UTC)
    tx_rows, span_rows, times = [], [], []
    for day in range(days):
        release = RELEASES[min(day * len(RELEASES) // days, len(RELEASES) - 1)]
        for _ in range(0 if day in skip else per_day):
            at = now - timedelta(days=days - day, minutes=rng.randint(0, 1400)) + timedelta(hours=1)
            times.append(at)
            environment = "production" if rng.random() < 0.8 else "staging"
            payload = browser_pageloads.pageload(
                rng,
                "https://shop.example",
                release,
                environment,
                at,
                str(1000 + rng.randint(0, 39)),
                rng.random() < 0.1,
            )
            raw = json.dumps(payload)
            origin = Origin(
                org_id=org_id,
                project_id=project_id,
                service=None,
                batch_id=uuid.uuid4().hex,
                received_at=time.time(),
            )
            row = transaction_row(payload, origin, raw.encode(), raw)
            tx_rows.append(row)
            span_rows.extend(spans_rows(payload, row, origin))
    client = get_warehouse(settings)
    for table, rows in (("transactions", tx_rows), ("spans", span_rows)):
        body = "\n".join(json.dumps(r, default=str) for r in rows).encode()
        client.raw_insert(table, insert_block=body, fmt="JSONEachRow")
    # What the performance assets' next tick does: the fact tables the pages read (``build``: the tick ran).
    if build:
        build_facts(client, now - timedelta(days=days + 1), now + timedelta(hours=2))
    return times


def test_every_performance_page_in_a_real_browser(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1360, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    def visit(url: str, name: str, min_figures: int) -> None:
        page.goto(url)
        if min_figures:
            page.wait_for_selector(".plot .main-svg")
        page.wait_for_load_state("networkidle")
        figures = page.evaluate(FIGURES_HOLD_DATA)
        assert len(figures) >= min_figures, (name, figures)
        empty = [f["id"] for f in figures if not f["traces"] or not f["points"]]
        assert not empty, (name, empty)
        assert page.evaluate("window.__csp") == [], name
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues")
    page.click("a.project-link[href$='/performance']")
    page.wait_for_url(base)
    visit(f"{base}?range=30d", "overview", 4)
    # Compare with the previous period, chosen in the filter bar: each daily chart names both lines.
    page.goto(f"{base}?range=7d")
    page.check("#compare-previous")
    page.click("#perf-filters button[type=submit]")
    page.wait_for_url("**compare=previous**")
    page.set_viewport_size({"width": 1024, "height": 900})
    visit(page.url, "overview_compare_1024", 4)
    assert page.locator(".legendtext", has_text="previous period").count() == 4
    page.set_viewport_size({"width": 1360, "height": 900})
    visit(f"{base}/pages?range=30d", "pages", 1)
    page.click("#pages-table a[href*='/pages/detail']")
    page.wait_for_selector("#samples")
    visit(page.url, "page_detail", 6)
    page.click("a.waterfall-link")
    page.wait_for_selector("#spans")
    visit(page.url, "waterfall", 1)
    statuses = set(page.locator("#spans td:nth-child(7)").all_inner_texts())
    assert statuses & {"blocking", "unknown"}, statuses  # Chrome marks blocking ones; others say unknown
    visit(f"{base}/resources?range=30d", "resources", 1)
    assert page.locator("#largest td", has_text="unknown").count() > 0  # Firefox/Safari report no status
    visit(f"{base}/api?range=30d&sort=p95_ms", "endpoints", 1)
    page.click("#endpoints-table a[href*='/api/detail']")
    page.wait_for_selector("#slowest")
    visit(page.url, "endpoint_detail", 3)
    visit(f"{base}/trends?range=30d", "trends", 2)
    visit(f"{base}/releases?range=30d", "releases", 1)
    assert any(
        t.startswith("Regression in shop@1.3.0") for t in page.locator(".regression").all_inner_texts()
    )
    visit(f"{base}/recommendations?range=30d", "recommendations", 0)
    assert page.locator(".rec-row[data-rules~=parallel_calls]").count() == 1
    visit(f"{base}/pages?range=30d&browser=Safari&environment=staging", "pages_thin", 1)
    assert page.locator(".few").count() > 0
    assert not errors, errors


def test_release_views_show_the_headline_regression_at_first_sight(
    chromium, server, org_factory, stores
) -> None:
    """Issue #47: the demo's shape (five releases over 35 days, shop@1.3.0 live 8 to 14 days ago): Release
    impact and Trends opened without a range show the regression and say which window they opened on; a
    week would show the newest release alone. Screenshots at 1400 and 1024 px."""

    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"], days=35, per_day=14)
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{base}/releases")
        page.wait_for_selector(".plot .main-svg")
        assert "opens on the last 30 days" in page.locator("#default-range").inner_text()
        assert any(
            t.startswith("Regression in shop@1.3.0") for t in page.locator(".regression").all_inner_texts()
        )
        page.screenshot(path=str(SHOTS / f"releases_default_{width}.png"), full_page=True)
        page.goto(f"{base}/trends")
        page.wait_for_selector(".plot .main-svg")
        assert page.locator("#default-range").count() == 1
        assert page.locator("#weekly tbody tr").count() >= 5  # the weeks of every release
        page.screenshot(path=str(SHOTS / f"trends_default_{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base}/trends?range=90d")
    page.wait_for_selector(".plot .main-svg")
    page.screenshot(path=str(SHOTS / "trends_90d_1400.png"))
    page.goto(f"{base}/releases?range=7d")
    assert page.locator("#releases-table", has_text="shop@1.3.0").count() == 0  # a week: the newest only
    # History the marts have not taken yet: the page says they are building, and how far.
    time.sleep(0.01)
    land_demo_traffic(stores, org["org_id"], org["project_id"], days=6, per_day=3, build=False)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base}/trends")
    notice = page.locator("#marts-building").inner_text()
    assert re.search(r"Building the last [67] days: \d+ %", notice), notice
    page.screenshot(path=str(SHOTS / "trends_building_1400.png"))
    assert not errors, errors
