"""The Explore page: the query in the URL answers a table and a chart with its sample count, a bad field is named
on the page, saved queries are listed and saved with the CSRF token, and another organization's project answers
nothing. One run in a real browser saves a screenshot."""

from __future__ import annotations

import html as html_lib
import re
from urllib.parse import urlencode

import pytest

from stacklens.warehouse.client import get_warehouse
from tests.browser import launch, shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, csrf_of, sign_in
from tests.dashboards.test_performance_browser import server  # noqa: F401 - the real uvicorn server fixture
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
def test_page_draws_the_chart_in_a_real_browser(server, acme) -> None:  # noqa: F811 - the fixture imported above
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as pw:
        chromium = launch(pw)
        page = chromium.new_page(viewport={"width": 1360, "height": 1000})
        watch_errors(page, errors, page_errors=False)
        sign_in_page(page, server, acme["email"], PASSWORD, f"{server}/orgs/{acme['org_slug']}")
        page.goto(
            f"{server}/orgs/{acme['org_slug']}/explore?" + urlencode([*QUERY, ("project", acme["project"])])
        )
        page.wait_for_selector("#plot-explore-0 .main-svg")
        traces = page.evaluate("() => document.getElementById('plot-explore-0').data.length")
        page.screenshot(path=str(SHOTS / "explore.png"), full_page=True)
        chromium.close()
    assert traces == 2  # one line per release
    assert errors == []
