"""Release and annotation markers on the time charts outside the performance pages — the budgets page and its
edit preview, an alert rule's preview, a release page and an issue's event chart — in a real browser against a
real uvicorn server, on the demo's five releases over three weeks and one annotation posted by CI: each chart
draws a dotted line and a label per marker, the release label links to its release page, and hovering a label
shows what it marks. Screenshots at 1400 and 1024 px (tests/_artifacts/markers, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from demo.budgets import ensure_demo_budgets
from stacklens.alerts import rules
from stacklens.annotations import create_annotation
from stacklens.control.db import session_scope
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic
from tests.stacklens.performance.budget_seed import fold

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("markers")

# Every chart on the page: its marker labels (Plotly annotations that capture hover: the markers' own), their
# hover texts and the dotted lines drawn with them.
MARKERS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .filter(p => ((p.layout || {}).xaxis || {}).type === 'date').map(p => ({
    id: p.id,
    labels: ((p.layout || {}).annotations || []).filter(a => a.captureevents).map(a => a.text),
    hovers: ((p.layout || {}).annotations || []).filter(a => a.captureevents).map(a => a.hovertext),
    lines: ((p.layout || {}).shapes || []).filter(s => s.line && s.line.dash === 'dot').length,
    csp: window.__csp,
}))"""


def _error(release: str, seconds_ago: float) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "level": "error",
        "timestamp": time.time() - seconds_ago,
        "release": release,
        "exception": {"values": [{"type": "TypeError", "value": "cart.items is undefined"}]},
    }


def _hover(page: Any, chart: str, label: str) -> str:
    """Hover the marker label ``label`` on the first chart matching ``chart`` and read the hover box."""
    plot = page.locator(chart).first
    plot.locator("g.annotation", has_text=label).first.hover()
    box = plot.locator(".hoverlayer .hovertext").first
    box.wait_for(timeout=5000)
    return str(box.text_content())


def _check(charts: list[dict[str, Any]], where: str, releases: list[str]) -> None:
    """Every chart of the page draws the annotation and the releases first seen in its span, one line each."""
    assert charts, where
    for chart in charts:
        assert chart["csp"] == [], (where, chart)
        labels = [
            label.rsplit(">", 2)[-2].split("<")[0] if label.startswith("<a") else label
            for label in chart["labels"]
        ]
        assert "deploy" in labels, (where, chart)
        assert chart["lines"] == len(chart["labels"]), (where, chart)
        (note,) = [h for label, h in zip(labels, chart["hovers"], strict=True) if label == "deploy"]
        assert note.startswith("checkout api v2 [deploy] · "), (where, note)
        for version in releases:
            (hover,) = [h for label, h in zip(labels, chart["hovers"], strict=True) if label == version]
            assert hover.startswith(f"shop@{version} first seen "), (where, hover)
            (link,) = [label for label in chart["labels"] if label.endswith(f">{version}</a>")]
            assert f'/releases/shop%40{version}"' in link, (where, link)


def test_markers_on_budgets_alert_previews_release_pages_and_issue_charts(
    chromium, server, org_factory, stores
) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    fold(get_warehouse(stores))
    assert ensure_demo_budgets(stores, org["project"]) == 3
    # Two errors of the newest release: an issue whose 14-day chart spans the last two releases.
    land(org["org_id"], org["project_id"], [_error("shop@1.4.0", 2 * 86400), _error("shop@1.4.0", 60)])
    # Posted by CI a few hours ago: far enough from the newest release (3 to 4 days ago) to be its own marker
    # even on a 30-day chart (markers closer than 2.5 days are drawn as one there).
    when = (datetime.now(UTC) - timedelta(hours=7)).isoformat()
    with session_scope(stores) as session:
        create_annotation(
            session, org["org_id"], {"text": "checkout api v2", "tags": ["deploy"], "time": when}
        )
        rule = rules.create_rule(
            session,
            org["org_id"],
            {
                "type": "performance_budget",
                "project": org["project"],
                "name": "Slow LCP",
                "metric": "lcp_ms",
                "statistic": "p75",
                "threshold": 1200,
                "window": "1h",
                "min_samples": 2,
            },
        )
        rule_id = rule.id
    project = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}"
    pages = [
        (
            "budgets",
            f"{project}/performance/budgets",
            "#budget-charts .plot",
            ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"],
        ),
        ("alert", f"{server}/orgs/{org['org_slug']}/alerts/{rule_id}", ".plot", ["1.0.0", "1.1.0", "1.4.0"]),
        ("release", f"{project}/releases/shop%401.3.0", ".plot", ["1.3.0", "1.4.0"]),
        ("issue", "", ".plot", ["1.2.0", "1.3.0", "1.4.0"]),
    ]
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    seen: dict[tuple[str, int], list[dict[str, Any]]] = {}
    hovers: dict[str, str] = {}
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own) and sign in again, CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        for name, url, plot, _ in pages:
            if name == "issue":
                page.goto(f"{project}/issues")
                page.click("a.issue-title")
            else:
                page.goto(url)
            page.wait_for_selector(f"{plot} .main-svg")
            page.wait_for_load_state("networkidle")
            seen[name, width] = page.evaluate(MARKERS)
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            if width == 1400:
                hovers[name] = _hover(page, plot, "deploy")
        # The budget's edit form previews 30 days with the same markers.
        page.goto(f"{project}/performance/budgets")
        page.locator("a.edit-budget").first.click()
        page.wait_for_selector("#budget-preview .plot .main-svg")
        page.wait_for_load_state("networkidle")
        seen["preview", width] = page.evaluate(MARKERS)
        page.screenshot(path=str(SHOTS / f"budget-preview-{width}.png"), full_page=True)
    page.close()
    assert errors == []
    expected = {name: releases for name, _, _, releases in pages} | {"preview": pages[0][3]}
    for (name, width), charts in seen.items():
        _check(charts, f"{name} at {width}", expected[name])
    # The budgets page draws every budget's chart with them; the page's other plots are none.
    assert len(seen["budgets", 1400]) == 3
    for name, text in hovers.items():
        assert "checkout api v2 [deploy]" in text, (name, text)
