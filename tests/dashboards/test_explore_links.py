""" "Open in Explore": every performance page, a release row and an issue's tags open Explore with the query
filled in, and Explore shows the same value as the page for the same metric and window (both take
percentiles of the same 1 % histogram values; the figures are compared as the pages print them, within the
catalog's stated error). One run in Debian's chromium clicks the links."""

from __future__ import annotations

import html as html_lib
import re
from datetime import datetime
from urllib.parse import parse_qsl, urlsplit

import dagster as dg
import pytest

from dashboards.explore_links import PERFORMANCE, release_health_link
from pipelines.assets.issues import related_issues
from pipelines.resources import resources_for
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, sign_in
from tests.dashboards.landing import land, sdk_event
from tests.stacklens.performance.perf_seed import seed

SHOTS = shots_dir("explore_links")
WINDOW = {"since": "2026-11-06T00:00:00Z", "until": "2026-11-20T13:00:00Z"}
PAGES = {
    "overview": "",
    "pages": "/pages",
    "page_detail": "/pages/detail?page=%2Fcheckout",
    "resources": "/resources",
    "endpoints": "/api",
    "trends": "/trends",
    "releases": "/releases",
}
VITALS = {
    "lcp": "lcp_p75_ms",
    "inp": "inp_p75_ms",
    "cls": "cls_p75",
    "fcp": "fcp_p75_ms",
    "ttfb": "ttfb_p75_ms",
}


@pytest.fixture
def acme(org_factory, stores):
    org = org_factory()
    seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=80)
    return org


def _link(html: str, pattern: str) -> str:
    found = re.search(pattern, html)
    assert found, pattern
    return html_lib.unescape(found.group(1))


def test_each_performance_page_opens_its_figure_in_explore(client, acme) -> None:
    sign_in(client, acme["email"])
    base = f"/orgs/{acme['org_slug']}/projects/{acme['project']}/performance"
    assert set(PAGES) <= set(PERFORMANCE)
    for name, suffix in PAGES.items():
        joiner = "&" if "?" in suffix else "?"
        page = client.get(
            f"{base}{suffix}{joiner}since={WINDOW['since']}&until={WINDOW['until']}&environment=production"
        )
        assert page.status_code == 200, (name, page.text[:300])
        href = _link(page.text, r'id="open-in-explore" href="([^"]+)"')
        params = parse_qsl(urlsplit(href).query)
        assert ("since", WINDOW["since"]) in params and ("f", "environment|=|production") in params, name
        assert ("dataset", PERFORMANCE[name].dataset) in params and ("project", acme["project"]) in params
        opened = client.get(href).text
        assert 'id="explore-error"' not in opened and 'id="explore-table"' in opened, (name, href)
    detail = client.get(
        f"{base}/pages/detail?page=%2Fcheckout&since={WINDOW['since']}&until={WINDOW['until']}"
    ).text
    assert ("f", "page|=|/checkout") in parse_qsl(
        urlsplit(_link(detail, r'id="open-in-explore" href="([^"]+)"')).query
    )
    # A browser filter the resource rows cannot carry is said, not silently dropped.
    resources = client.get(
        f"{base}/resources?since={WINDOW['since']}&until={WINDOW['until']}&browser=Chrome"
    ).text
    assert "no browser field for this data" in resources
    releases = client.get(f"{base}/releases?since={WINDOW['since']}&until={WINDOW['until']}").text
    errors_link = _link(releases, r'class="release-explore small" href="([^"]+)" title="This release.s error')
    assert ("dataset", "errors") in parse_qsl(urlsplit(errors_link).query)
    assert 'id="explore-table"' in client.get(errors_link).text
    # A release's sessions (the release pages' figures): no sessions here, a table of zeros, not an error.
    sessions = client.get(
        release_health_link(acme["org_slug"], acme["project"], "shop@1.1.0", "production", *_window(WINDOW))
    ).text
    assert 'id="explore-error"' not in sessions and 'data-column="crash_free_sessions_pct"' in sessions
    # The release health list (a link per release) and a release's page open that query too.
    health = f"/orgs/{acme['org_slug']}/projects/{acme['project']}/releases"
    listed = client.get(f"{health}?since={WINDOW['since']}&until={WINDOW['until']}").text
    row_link = _link(
        listed, r'<a class="open-in-explore" href="([^"]+)" title="[^"]+ sessions per day in Explore"'
    )
    row_params = parse_qsl(urlsplit(row_link).query)
    assert ("dataset", "sessions") in row_params and ("since", WINDOW["since"]) in row_params
    version = next(v for k, v in row_params if k == "f" and v.startswith("release|=|")).split("|=|", 1)[1]
    page = client.get(f"{health}/{version}?since={WINDOW['since']}&until={WINDOW['until']}").text
    page_link = _link(page, r'id="open-in-explore" href="([^"]+)"')
    assert ("f", f"release|=|{version}") in parse_qsl(urlsplit(page_link).query)
    assert 'id="explore-error"' not in client.get(page_link).text


def _window(window: dict[str, str]) -> tuple[datetime, datetime]:
    return tuple(datetime.fromisoformat(window[k].replace("Z", "+00:00")) for k in ("since", "until"))


def _number(locator) -> float:
    return float(locator.get_attribute("data-value"))


@pytest.mark.browser
def test_open_in_explore_shows_the_pages_numbers(chromium, server, acme, stores) -> None:

    rows = land(
        acme["org_id"],
        acme["project_id"],
        [
            sdk_event(_fail, user={"id": f"u-{i % 2}"}, tags={"region": "eu"}, environment="production")
            for i in range(3)
        ],
    )
    assert dg.materialize(
        [related_issues], resources={"warehouse": resources_for(stores)["warehouse"]}
    ).success
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, acme["email"], PASSWORD, f"{server}/orgs/{acme['org_slug']}")

    # The overview's web vitals: each p75 and its sample count, then the same in Explore.
    base = f"{server}/orgs/{acme['org_slug']}/projects/{acme['project']}"
    page.goto(f"{base}/performance?since={WINDOW['since']}&until={WINDOW['until']}&environment=production")
    shown = {}
    for vital in VITALS:
        card = page.locator(f'.vital[data-metric="{vital}"]')
        shown[vital] = (
            _number(card.locator(".vital-value [data-value]")),
            int(card.locator("[data-samples]").get_attribute("data-samples")),
        )
    page.screenshot(path=str(SHOTS / "perf_overview_open_in_explore.png"))
    page.click("#open-in-explore")
    page.wait_for_selector("#explore-table")
    page.wait_for_selector("#plot-explore-0 .main-svg")
    for vital, column in VITALS.items():
        cell = page.locator(f'#explore-table td[data-column="{column}"]')
        value, samples = shown[vital]
        assert _number(cell) == pytest.approx(value, rel=QUANTILE_RELATIVE_ERROR), vital
        assert int(cell.get_attribute("data-samples")) == samples, vital
    assert page.locator('#explore-table th[data-column="lcp_p75_ms"]').inner_text() == "LCP p75 (ms)"
    assert re.fullmatch(
        r"[\d,]+\.\d ms\s+n=[\d,]+",
        page.locator('#explore-table td[data-column="lcp_p75_ms"]').inner_text(),
    )
    page.screenshot(path=str(SHOTS / "explore_from_overview.png"), full_page=True)

    # The release rows and a page whose filter Explore cannot carry, as a reader sees them.
    page.goto(f"{base}/performance/releases?since={WINDOW['since']}&until={WINDOW['until']}")
    page.locator("#releases-table").screenshot(path=str(SHOTS / "perf_releases_explore_links.png"))
    page.goto(f"{base}/performance/resources?since={WINDOW['since']}&until={WINDOW['until']}&browser=Chrome")
    page.locator(".explore-open").screenshot(path=str(SHOTS / "perf_resources_explore_note.png"))

    # An issue's tag: the issue's events with region=eu, as many as the issue has (all carry it).
    page.goto(f"{base}/issues/{rows[0]['issue_id']}")
    totals = page.locator("#issue-totals").inner_text()
    events, users = (int(n) for n in re.findall(r"(\d+) (?:event|user)", totals))
    page.locator("#tags").screenshot(path=str(SHOTS / "issue_tags_explore.png"))
    page.locator('#tags li:has(.tag-key:text-is("region")) a.tag-explore').click()
    page.wait_for_selector("#explore-table")
    assert (
        int(page.locator('#explore-table td[data-column="count"]').get_attribute("data-value")) == events == 3
    )
    assert (
        int(page.locator('#explore-table td[data-column="unique_users"]').get_attribute("data-value"))
        == users
        == 2
    )
    page.screenshot(path=str(SHOTS / "explore_from_issue_tag.png"), full_page=True)
    assert not errors, errors


def _fail() -> None:
    raise RuntimeError("checkout failed for region eu")
