"""A dashboard with variables, drill-down, auto-refresh, TV mode and every new widget kind (issue 70 points
3–6), looked at in Chromium (1440 and 1024 px), in its shared snapshot and in its PDF (rendered to PNG): the
variables' values come from the window's data and live in the URL, a variable without values says "no
values" instead of an empty chart, a bar opens its page's vitals and a stacked bar its slice in Explore, the
page reloads itself at its refresh pace only while shown, TV mode hides the navigation and editing, and the
area, stacked bar, scatter, heat map and gauge draw the metrics layer's numbers with their units.
Screenshots in tests/_artifacts/dashboards."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlparse

from stacklens.control.db import session_scope
from stacklens.explore import dashboard_shares as shares
from stacklens.explore import report_pdf
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.reports import report_widgets
from stacklens.explore.widget_kinds import gauge_budgets
from stacklens.explore.widgets import answer_widgets
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic

SHOTS = shots_dir("dashboards")
VARIABLES = [
    {"name": "page", "column": "page"},
    {"name": "browser", "column": "browser"},
    {"name": "plan", "column": "tag:plan"},  # the demo's page loads carry no plan tag: no values
]
WIDGETS: list[dict[str, Any]] = [
    {
        "title": "LCP p75 against its budget",
        "kind": "gauge",
        "view": "performance.lcp",
        "layout": {"w": 4, "h": 2},
    },
    {
        "title": "Page loads (area)",
        "kind": "area",
        "query": {"dataset": "pageloads", "aggregates": [{"fn": "count"}], "interval": "1d"},
        "layout": {"w": 8, "h": 2},
    },
    {
        "title": "Page loads by browser (stacked)",
        "kind": "stacked_bar",
        "query": {
            "dataset": "pageloads",
            "group_by": ["browser"],
            "aggregates": [{"fn": "count"}],
            "interval": "1d",
        },
        "layout": {"w": 6, "h": 2},
    },
    {
        "title": "Pages: traffic against LCP",
        "kind": "scatter",
        "query": {
            "dataset": "pageloads",
            "group_by": ["page"],
            "aggregates": [{"fn": "count"}, {"fn": "p75", "metric": "lcp_ms"}],
        },
        "layout": {"w": 6, "h": 2},
    },
    {
        "title": "LCP distribution",
        "kind": "heatmap",
        "query": {
            "dataset": "pageloads",
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
            "interval": "1d",
        },
        "layout": {"w": 12, "h": 2},
    },
    {
        "title": "LCP p75 by page",
        "kind": "bar",
        "query": {
            "dataset": "pageloads",
            "group_by": ["page"],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
        },
        "layout": {"w": 6, "h": 2},
    },
    {
        "title": "Page loads of $plan",
        "kind": "line",
        "query": {
            "dataset": "pageloads",
            "aggregates": [{"fn": "count"}],
            "filters": [{"field": "tag:plan", "op": "=", "value": "$plan"}],
            "interval": "1d",
        },
        "layout": {"w": 6, "h": 2},
    },
]
READ = """() => {
  const plot = i => document.getElementById('plot-widget-' + i);
  const trace = i => (plot(i) && plot(i).data && plot(i).data[0]) || {};
  return {
    gauge: {type: trace(0).type, threshold: trace(0).gauge && trace(0).gauge.threshold.value,
            words: document.querySelector('#widget-0 .widget-gauge')?.textContent.trim()},
    area: {fill: trace(1).fill, x: (trace(1).x || []).length},
    stacked: {mode: plot(2)?.layout.barmode, traces: (plot(2)?.data || []).length},
    scatter: {mode: trace(3).mode, points: (trace(3).x || []).length, x: plot(3)?.layout.xaxis.title.text,
              y: plot(3)?.layout.yaxis.title.text},
    heat: {type: trace(4).type, rows: trace(4).y, columns: (trace(4).x || []).length},
    bars: (trace(5).x || []),
    noValues: document.querySelector('#widget-6 .widget-no-values')?.textContent.trim(),
    plan: Array.from(document.querySelectorAll('select[name="var-plan"] option')).map(o => o.textContent),
    pages: Array.from(document.querySelectorAll('select[name="var-page"] option')).map(o => o.value),
    csp: window.__csp,
    topbar: !!document.querySelector('.topbar') && getComputedStyle(document.querySelector('.topbar')).display,
    menus: Array.from(document.querySelectorAll('.widget-menu')).filter(m => m.offsetParent !== null).length,
  };
}"""


def _at_width(page: Any, width: int) -> None:
    """The page at ``width`` px, its plots laid out again (Plotly follows a resize after a pause), and
    no plot wider than its card."""
    page.set_viewport_size({"width": width, "height": 900})
    page.evaluate(
        "() => Promise.all(Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".map(p => window.Plotly.Plots.resize(p)))"
    )
    over = page.evaluate(
        "() => Array.from(document.querySelectorAll('.widget')).filter(w => { const s = w.querySelector('.main-svg');"
        " return s && s.getBoundingClientRect().right > w.getBoundingClientRect().right + 1; }).map(w => w.id)"
    )
    assert over == [], over


def _click_first_bar(page: Any, plot: str) -> None:
    bars = page.locator(f"{plot} .trace.bars").first.locator(".point path")
    # A bucket without rows is an empty path (a gap): click the first bar drawn.
    drawn = [i for i in range(bars.count()) if ((bars.nth(i).bounding_box() or {}).get("height") or 0) > 4]
    bar = bars.nth(drawn[0])
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] - 3
    page.mouse.move(x, y)  # Plotly clicks the hovered point: hover first
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def test_variables_drill_down_refresh_tv_and_every_kind(chromium, server, org_factory, stores) -> None:
    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    slug, project = org["org_slug"], org["project"]
    with session_scope(stores) as session:
        board = create_dashboard(
            session,
            org["org_id"],
            {
                "name": "Shop vitals",
                "filters": {"range": "30d", "project": project},
                "variables": VARIABLES,
                "widgets": WIDGETS,
            },
        )
        _, token = shares.create_share(session, org["org_id"], board.id, 7)
    url = f"{server}/orgs/{slug}/dashboards/{board.id}"
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{slug}")
    page.goto(url)
    page.wait_for_selector("#plot-widget-4 .main-svg")
    seen = page.evaluate(READ)
    page.screenshot(path=str(SHOTS / "kinds-page-1440.png"), full_page=True)
    assert seen["csp"] == [] and seen["topbar"] not in ("none", False) and seen["menus"] == 7, seen
    assert seen["gauge"]["type"] == "indicator" and seen["gauge"]["threshold"] == 2500, seen["gauge"]
    assert "Budget 2,500" in seen["gauge"]["words"] and "budget" in seen["gauge"]["words"], seen["gauge"]
    assert " ms · " in seen["gauge"]["words"] or " s · " in seen["gauge"]["words"], seen["gauge"]
    assert seen["area"]["fill"] == "tozeroy" and seen["area"]["x"] in (30, 31), seen["area"]
    assert seen["stacked"]["mode"] == "stack" and seen["stacked"]["traces"] >= 2, seen["stacked"]
    assert seen["scatter"]["mode"] == "markers+text" and seen["scatter"]["points"] >= 2, seen["scatter"]
    assert (seen["scatter"]["x"], seen["scatter"]["y"]) == ("Count", "LCP p75 (ms)"), seen["scatter"]
    assert seen["heat"]["type"] == "heatmap" and seen["heat"]["columns"] in (30, 31), seen["heat"]
    assert [r.split(" ")[1] for r in seen["heat"]["rows"]] == ["p50", "p75", "p90", "p95", "p99"], seen[
        "heat"
    ]
    # The variables: the window's pages to choose from; a tag nobody sends says so, and so does its widget.
    assert seen["plan"] == ["no values"] and seen["noValues"].startswith("No values: $plan"), seen
    pages = [p for p in seen["pages"] if p]
    assert set(pages) >= set(seen["bars"]) - {"others"} and pages, (pages, seen["bars"])

    # A chosen value is in the URL, kept by a link, and filters every widget with a page field.
    chosen = pages[0]
    page.select_option('select[name="var-page"]', chosen)
    page.click("#dashboard-filters button[type=submit]")
    page.wait_for_selector("#plot-widget-4 .main-svg")
    assert parse_qs(urlparse(page.url).query)["var-page"] == [chosen]
    page.goto(page.url)
    page.wait_for_selector("#plot-widget-5 .main-svg")
    assert page.input_value('select[name="var-page"]') == chosen
    bars = page.evaluate("() => document.getElementById('plot-widget-5').data[0].x")
    assert bars == [chosen], bars
    explore = page.get_attribute("#widget-1 .explore-link", "href") or ""
    assert f"page|=|{chosen}" in parse_qs(urlparse(explore).query)["f"], explore
    _at_width(page, 1024)
    page.screenshot(path=str(SHOTS / "kinds-variables-1024.png"), full_page=True)

    # Drill-down: a bar of pages opens that page's vitals over the window; a stacked bar opens its slice.
    page.goto(url)
    page.wait_for_selector("#plot-widget-5 .main-svg")
    page.wait_for_selector("#plot-widget-5[data-drill=yes]")
    first = page.evaluate("() => document.getElementById('plot-widget-5').data[0].x[0]")
    _click_first_bar(page, "#plot-widget-5")
    page.wait_for_url(lambda u: "/performance/pages/detail?" in u, timeout=60_000)
    query = parse_qs(urlparse(page.url).query)
    assert query["page"] == [first] and "since" in query and "until" in query, page.url
    page.wait_for_selector("h1")
    page.goto(url)
    page.wait_for_selector("#plot-widget-2[data-drill=yes]")
    browser = page.evaluate("() => document.getElementById('plot-widget-2').data[0].name")
    page.set_viewport_size({"width": 1440, "height": 900})
    _click_first_bar(page, "#plot-widget-2")
    page.wait_for_url(lambda u: "/explore?" in u, timeout=60_000)
    query = parse_qs(urlparse(page.url).query)
    assert f"browser|=|{browser.split('=', 1)[1]}" in query["f"], page.url
    since, until = (datetime.fromisoformat(query[k][0].replace("Z", "+00:00")) for k in ("since", "until"))
    assert 0 < (until - since).total_seconds() <= 86_400, (since, until)  # one bucket of the window

    # Auto-refresh: reloads at its pace while shown, never while the tab is hidden.
    page.clock.install()
    page.goto(url + "?refresh=30s")
    page.wait_for_selector("#dashboard-refresh-note")
    assert "every 30s" in page.inner_text("#dashboard-refresh-note")
    page.evaluate("() => { window.__kept = true; }")
    page.evaluate(
        "() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
        " document.dispatchEvent(new Event('visibilitychange')); }"
    )
    page.clock.run_for(45_000)
    assert page.evaluate("() => window.__kept === true"), "reloaded while hidden"
    page.evaluate(
        "() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
        " document.dispatchEvent(new Event('visibilitychange')); }"
    )
    with page.expect_navigation():
        page.clock.run_for(1_000)  # overdue while hidden: asked again as soon as it is shown
    assert page.evaluate("() => window.__kept === undefined")

    # TV mode: no navigation, no editing, the refresh kept.
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto(url + "?tv=1&refresh=1m")
    page.wait_for_selector("#plot-widget-4 .main-svg")
    tv = page.evaluate(READ)
    assert tv["topbar"] == "none" and tv["menus"] == 0, tv
    assert not page.is_visible("#subscriptions") and page.is_visible("#dashboard-fullscreen")
    assert "every 1m" in page.inner_text("#dashboard-refresh-note")
    _at_width(page, 1024)
    page.screenshot(path=str(SHOTS / "kinds-tv-1024.png"), full_page=True)

    # The share draws the same kinds, without drill links into signed-in pages.
    page.context.clear_cookies()
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto(f"{server}{shares.PATH.format(token=token)}")
    page.wait_for_selector("#plot-widget-4 .main-svg")
    shared = page.evaluate(READ)
    page.screenshot(path=str(SHOTS / "kinds-share-1024.png"), full_page=True)
    assert shared["gauge"]["type"] == "indicator" and shared["heat"] == seen["heat"], shared
    assert shared["scatter"] == seen["scatter"] and shared["area"]["fill"] == "tozeroy", shared
    assert shared["noValues"].startswith("No values: $plan") and "$page = all" in page.inner_text(
        "#shared-note"
    )
    assert page.evaluate("() => document.querySelectorAll('[data-drill]').length") == 0
    page.close()
    assert errors == []

    # The PDF: the same kinds drawn, the gauge against its budget, the heat map's scale in units.
    now = datetime.now(UTC)
    with session_scope(stores) as session:
        # The widgets as a scheduled report answers them (its variables at their defaults).
        widgets, named = report_widgets(get_warehouse(stores), session, org["org_id"], board, now)
        filters = {**board.filters}
        answers = answer_widgets(get_warehouse(stores), session, org["org_id"], widgets, filters, now)
        budgets = gauge_budgets(session, org["org_id"], project, answers)
    pdf = report_pdf.dashboard_pdf(
        "Shop vitals", "30d", answers, "http://x", now, lambda a: [a.widget["title"]], budgets
    )
    path = SHOTS / "kinds.pdf"
    path.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-png", "-r", "70", str(path), str(SHOTS / "kinds-pdf")], check=True)
    text = " ".join(
        subprocess.run(
            ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
        ).stdout.split()
    )
    for title in (
        "LCP p75 against its budget",
        "Page loads (area)",
        "Pages: traffic against LCP",
        "LCP distribution",
    ):
        assert title in text, (title, text)
    assert "Budget 2,500" in text and ("within budget" in text or "over budget" in text), text
    assert "lightest" in text and "ms" in text.split("lightest", 1)[1][:60], text
    assert "across: Count | up: LCP p75 (ms)" in text, text
    # A variable without values: the report's widget says so, as the page's, instead of every value's line.
    assert named == "$page = all, $browser = all, $plan = all", named
    assert "No values: $plan has no values in this window" in text, text
