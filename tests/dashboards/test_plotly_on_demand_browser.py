"""plotly.js (4.8 MB) is fetched only by a page that draws a figure (dashboards/static/app.js), in a real
browser against a real server: the issue list and the organization's settings fetch nothing of it and leave
``window.Plotly`` undefined; an issue's page fetches it once and, by its load event, has drawn every figure
it holds."""

from __future__ import annotations

import pytest

from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land, sdk_event

pytestmark = [pytest.mark.browser]
PLOTLY = "/static/vendor/plotly.min.js"


def _fail() -> None:
    raise ValueError("the cart total is negative")


def test_only_a_page_with_a_figure_fetches_plotly(chromium, server, org_factory) -> None:
    org = org_factory()
    [row] = land(org["org_id"], org["project_id"], [sdk_event(_fail)])
    errors: list[str] = []
    fetched: list[str] = []
    page = chromium.new_page()
    watch_errors(page, errors)
    page.on("request", lambda request: fetched.append(request.url))
    org_url = f"{server}/orgs/{org['org_slug']}"
    sign_in_page(page, server, org["email"], PASSWORD, org_url)

    for path in (f"/projects/{org['project']}/issues", "/settings"):
        page.goto(org_url + path, wait_until="load")
        assert page.locator("[data-figure]").count() == 0, path
        assert page.evaluate("typeof window.Plotly") == "undefined", path
    assert not [url for url in fetched if url.endswith(PLOTLY)], fetched

    page.goto(f"{org_url}/projects/{org['project']}/issues/{row['issue_id']}", wait_until="load")
    holders = page.locator("[data-figure]").count()
    assert holders >= 1
    # Drawn by the load event: every holder has plotly's SVG, and the script came once.
    assert page.locator("[data-figure] .main-svg").count() >= holders
    assert page.evaluate("typeof window.Plotly") == "object"
    assert [url for url in fetched if url.endswith(PLOTLY)] == [server + PLOTLY]
    assert errors == []
