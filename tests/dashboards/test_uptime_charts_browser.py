"""Uptime as a budget and on the time charts beside the release markers (issue 64), in a real browser
against a real uvicorn server: a week of demo page loads release by release, and an uptime check's probes
every 15 minutes with an outage of two hours. The budgets page shows the uptime budget as a floor
("≥ 99.900 %") that fails, its margin under the floor, and the performance page's time charts carry the
uptime line on a right-hand axis beside the releases' markers. Screenshots at 1024 and 1440 px
(tests/_artifacts/uptime, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from stacklens.control.budgets import create_budget
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.monitors.uptime_reads import uptime_buckets
from stacklens.performance.budget_eval import BudgetSpec, evaluate
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic
from tests.stacklens.performance.budget_seed import fold

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("uptime")

# Each time chart's uptime trace (points, axis) and its release-marker labels.
CHARTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .filter(p => ((p.layout || {}).xaxis || {}).type === 'date').map(p => ({
    id: p.id,
    uptime: (p.data || []).filter(t => t.name === 'Uptime (%)').map(t => ({n: t.y.length, axis: t.yaxis,
      low: Math.min(...t.y)})),
    markers: ((p.layout || {}).annotations || []).filter(a => a.captureevents).length,
    csp: window.__csp,
}))"""


def _probes(org: dict, now: datetime) -> list[list[object]]:
    """A week of probes every 15 minutes; down from 30 to 28 hours ago (eight probes)."""
    rows: list[list[object]] = []
    at = now - timedelta(days=6)
    while at < now:
        down = timedelta(hours=28) <= now - at < timedelta(hours=30)
        rows.append(
            [
                org["org_id"],
                org["project_id"],
                1,
                "shop",
                at,
                "down" if down else "ok",
                0 if down else 200,
                None if down else 20.0,
                1500.0 if down else 40.0,
                None,
                "timed out" if down else "",
            ]
        )
        at += timedelta(minutes=15)
    return rows


def test_uptime_budget_and_uptime_beside_release_markers(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"], days=7, per_day=6)
    warehouse = get_warehouse(stores)
    fold(warehouse, days=8)
    now = datetime.now(UTC)
    columns = [
        "org_id",
        "project_id",
        "monitor_id",
        "monitor_slug",
        "timestamp",
        "status",
        "http_code",
        "ttfb_ms",
        "total_ms",
        "tls_days_left",
        "error",
    ]
    rows = _probes(org, now)
    warehouse.insert("monitor_checks", rows, column_names=columns)
    with session_scope(stores) as session:
        project = session.get(Project, org["project_id"])
        assert project is not None
        budget = create_budget(session, project, "uptime_pct", "*", 99.9, window_days=7, min_samples=10)
    # One number: the budget's value is the probes' share, and the chart's hourly buckets add up to it.
    (evaluation,) = evaluate(
        warehouse, [BudgetSpec(budget.id, org["project_id"], "uptime_pct", "avg", "*", 99.9, 7, 10)]
    )
    assert evaluation.samples == len(rows) and evaluation.status == "fail"
    assert evaluation.value == pytest.approx(100 * (len(rows) - 8) / len(rows))
    buckets = uptime_buckets(warehouse, org["org_id"], [org["project_id"]], now - timedelta(days=2), now)
    assert min(b.uptime_pct for b in buckets) == 0.0 and max(b.uptime_pct for b in buckets) == 100.0
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/performance"
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{base}/budgets")
    page.wait_for_selector("#budget-charts .plot .main-svg")
    row = page.locator(f"#budgets-table tr[data-budget='{budget.id}']")
    text = row.inner_text()
    assert row.get_attribute("data-status") == "fail", text
    assert "every uptime check" in text and "≥ 99.900 %" in text, text
    assert row.locator(".margin").inner_text().startswith("−")  # under its floor
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"uptime-budget-{width}.png"), full_page=True)
    page.goto(f"{base}?range=7d")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    page.wait_for_load_state("networkidle")
    charts = page.evaluate(CHARTS)
    marked = [c for c in charts if c["uptime"] and c["markers"]]
    assert marked, charts
    # Seven days: a point per day; the outage's day (or two, across midnight) lost 8 probes of 96 a day.
    for chart in marked:
        (line,) = chart["uptime"]
        assert line["axis"] == "y2" and 6 <= line["n"] <= 7 and 91.6 < line["low"] < 100, chart
    assert not any(c["csp"] for c in charts)
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"uptime-performance-{width}.png"), full_page=True)
    assert errors == []
