"""The Explore page: the query in the URL answers a table and a chart with its sample count, a bad field is
named on the page, saved queries are listed and saved with the CSRF token, and another organization's
project answers nothing. One run in a real browser saves a screenshot."""

from __future__ import annotations

import html as html_lib
import re
from urllib.parse import urlencode

import pytest

from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, csrf_of, sign_in
from tests.stacklens.performance.perf_seed import seed

SHOTS = shots_dir("explore")
QUERY = [
    ("dataset", "pageloads"),
    ("since", "2026-11-06T00:00:00Z"),
    ("until", "2026-11-20T13:00:00Z"),
    ("interval", "1d"),
    ("g", "release"),
    ("a", "count:"),
    ("a", "p75:lcp_ms"),
    ("f", "environment|=|production"),
]


@pytest.fixture
def acme(org_factory, stores):
    org = org_factory()
    seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=60)
    return org


def test_page_answers_table_chart_and_saved_queries(client, acme, org_factory) -> None:
    sign_in(client, acme["email"])
    path = f"/orgs/{acme['org_slug']}/explore"
    page = client.get(path + "?" + urlencode([*QUERY, ("project", acme["project"])]))
    assert page.status_code == 200
    html = page.text
    assert 'id="explore-table"' in html and "lcp_p75_ms" in html and "shop@1.1.0" in html
    assert 'data-figure="fig-explore-0"' in html and "samples" in html
    # The page's downloads are named after the question and its window, not explore.csv (issue 70).
    csv_link = re.search(r'class="download download-csv" href="([^"]+)"', html)
    assert csv_link is not None
    download = client.get(html_lib.unescape(csv_link.group(1)))
    named = "count-and-lcp-p75-by-release-2026-11-06-to-2026-11-20.csv"
    assert download.headers["content-disposition"] == f'attachment; filename="{named}"', download.headers
    assert 'script type="application/json" id="fig-explore-1"' in html
    bad = client.get(path + "?" + urlencode([("dataset", "pageloads"), ("g", "nope")]))
    assert bad.status_code == 200 and "group_by[0]: unknown field &#39;nope&#39;" in bad.text
    other = org_factory("Other")
    hidden = client.get(path + "?" + urlencode([*QUERY, ("project", other["project"])]))
    assert "no project" in hidden.text and 'id="explore-table"' not in hidden.text
    saved = client.post(
        path + "/queries",
        data={
            "csrf_token": csrf_of(html),
            "name": "LCP by release",
            "description": "production",
            "query": urlencode(QUERY),
        },
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    listing = client.get(path).text
    assert (
        "LCP by release" in listing
        and f"saved by {acme['email']}" in listing
        and "f=environment%7C%3D%7Cproduction" in listing
    )
    # The performance pages list opens each page in Explore with the view's window and filters filled in.
    pages = client.get(
        f"/orgs/{acme['org_slug']}/projects/{acme['project']}/performance/pages",
        params={"since": QUERY[1][1], "until": QUERY[2][1], "environment": "production"},
    ).text
    link = re.search(r'class="open-in-explore" href="([^"]+)"', pages)
    assert link and "f=environment%7C%3D%7Cproduction" in link.group(1) and "f=page%7C%3D%7C" in link.group(1)
    opened = client.get(html_lib.unescape(link.group(1))).text
    assert 'id="explore-table"' in opened and "load_p75_ms" in opened
    refused = client.post(path + "/queries", data={"name": "x", "query": ""}, follow_redirects=False)
    assert refused.status_code in (400, 403)


@pytest.mark.browser
def test_page_draws_the_chart_in_a_real_browser(chromium, server, acme) -> None:

    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1360, "height": 1000})
    watch_errors(page, errors, page_errors=False)
    sign_in_page(page, server, acme["email"], PASSWORD, f"{server}/orgs/{acme['org_slug']}")
    page.goto(
        f"{server}/orgs/{acme['org_slug']}/explore?" + urlencode([*QUERY, ("project", acme["project"])])
    )
    page.wait_for_selector("#plot-explore-0 .main-svg")
    traces = page.evaluate("() => document.getElementById('plot-explore-0').data.length")
    page.screenshot(path=str(SHOTS / "explore.png"), full_page=True)
    assert traces == 2  # one line per release
    assert errors == []


def test_the_aggregate_menu_offers_only_what_the_server_accepts(client, org_factory) -> None:
    """Issue #47: page loads offered p75(page_loads) and rate_per_1k, which the query then refused."""
    org = org_factory()
    sign_in(client, org["email"])
    page = client.get(f"/orgs/{org['org_slug']}/explore", params={"dataset": "pageloads"}).text
    offered = set(re.findall(r'<option value="([a-z0-9_]+:[a-z0-9_]*)"', page))
    assert {"count:", "p75:lcp_ms", "unique_users:"} <= offered
    assert "p75:page_loads" not in offered and not any(o.startswith("rate_per_1k") for o in offered)
    errors = client.get(f"/orgs/{org['org_slug']}/explore", params={"dataset": "errors"}).text
    offered = set(re.findall(r'<option value="([a-z0-9_]+:[a-z0-9_]*)"', errors))
    assert "rate_per_1k:" in offered, offered


@pytest.mark.browser
def test_compare_and_markers_in_a_real_browser(chromium, server, org_factory, stores) -> None:
    """Compare with the previous period: the table has the previous value and the change beside each
    aggregate, each chart overlays the previous period dotted, the releases first seen in the window are
    marked; screenshots at 1400 and 1024 px."""

    from tests.dashboards.test_performance_browser import land_demo_traffic

    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    query = [
        ("dataset", "pageloads"),
        ("range", "7d"),
        ("interval", "1d"),
        ("a", "count:"),
        ("a", "p75:lcp_ms"),
    ]
    url = f"{server}/orgs/{org['org_slug']}/explore?" + urlencode([*query, ("compare", "previous")])
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    seen = {}
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own) and sign in again, CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    watch_errors(page, errors, page_errors=False)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 1000})
        page.goto(url)
        page.wait_for_selector("#plot-explore-0 .main-svg")
        seen[width] = page.evaluate(
            """() => ({
              headers: Array.from(document.querySelectorAll('#explore-table th')).map(h => h.textContent),
              cells: Array.from(document.querySelectorAll('#explore-table tbody td')).map(c => c.textContent.trim()),
              traces: document.getElementById('plot-explore-0').data.map(t => t.name),
              markers: (document.getElementById('plot-explore-0').layout.annotations || []).map(a => a.text),
              checked: document.getElementById('explore-compare').checked,
            })"""
        )
        page.screenshot(path=str(SHOTS / f"explore-compare-{width}.png"), full_page=True)
    page.close()
    assert errors == []
    for width, got in seen.items():
        assert got["checked"] and got["headers"] == [
            "Count",
            "Previous",
            "Change",
            "LCP p75 (ms)",
            "Previous",
            "Change",
            "Samples",
        ], (width, got)
        count, before, change = got["cells"][:3]
        now_n, before_n = int(count.replace(",", "")), int(before.replace(",", ""))
        assert change == f"{(now_n - before_n) / before_n * 100:+,.1f} %", got
        assert got["traces"] == ["all", "all (previous period)"], got
        assert any("/releases/shop%401." in m for m in got["markers"]), got


def test_release_against_the_release_before_it_on_the_page(chromium, server, org_factory, stores) -> None:
    """ "Compare with the release before it": shop@1.4.0's table beside shop@1.3.0's (its predecessor by first
    seen), each column the release's own answer, the chart overlaying 1.3.0 dotted; without a release
    filter the page names the missing filter; screenshots at 1400 and 1024 px."""

    from tests.dashboards.test_performance_browser import land_demo_traffic

    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    base = [
        ("dataset", "pageloads"),
        ("range", "30d"),
        ("interval", "1d"),
        ("a", "count:"),
        ("a", "p75:lcp_ms"),
    ]
    explore = f"{server}/orgs/{org['org_slug']}/explore?"
    url = explore + urlencode([*base, ("f", "release|=|shop@1.4.0"), ("compare", "release")])
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    seen: dict = {}
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own) and sign in again, CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    watch_errors(page, errors, page_errors=False)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 1000})
        own = {}
        for version in ("shop@1.4.0", "shop@1.3.0"):
            page.goto(explore + urlencode([*base, ("f", f"release|=|{version}")]))
            page.wait_for_selector("#explore-table tbody td")
            own[version] = page.eval_on_selector_all(
                "#explore-table tbody td", "cells => cells.map(c => c.textContent.trim())"
            )
        page.goto(url)
        page.wait_for_selector("#plot-explore-0 .main-svg")
        seen[width] = page.evaluate(
            """() => ({
              cells: Array.from(document.querySelectorAll('#explore-table tbody td')).map(c => c.textContent.trim()),
              traces: document.getElementById('plot-explore-0').data.map(t => t.name),
              checked: document.getElementById('explore-compare-release').checked,
              said: document.getElementById('explore-compared-release').textContent,
            })"""
        )
        seen[width]["own"] = own
        page.screenshot(path=str(SHOTS / f"explore-release-compare-{width}.png"), full_page=True)
        page.goto(explore + urlencode([*base, ("compare", "release")]))
        seen[width]["error"] = page.locator(".error, #explore-error").first.inner_text()
    page.close()
    assert errors == []
    for width, got in seen.items():
        assert got["checked"] and got["said"] == "compared with shop@1.3.0, first seen before it", (
            width,
            got,
        )
        count, before, change, lcp, lcp_before, _lcp_change, _samples = got["cells"]
        # Each side is the release's own answer on its own page (a previous cell shows the value without its
        # n=).
        mine, theirs = (
            tuple(c.split(" n=")[0] for c in got["own"][v][:2]) for v in ("shop@1.4.0", "shop@1.3.0")
        )
        assert (count, lcp.split(" n=")[0]) == mine and (before, lcp_before) == theirs, got
        now_n, before_n = int(count.replace(",", "")), int(before.replace(",", ""))
        assert change == f"{(now_n - before_n) / before_n * 100:+,.1f} %", got
        assert got["traces"] == ["all", "all (shop@1.3.0)"], got
        assert "compare.previous_release" in got["error"], got
