"""Shared dashboards: a link made on the page (shown once) or over the API opens the dashboard signed out,
read-only (no edit forms, no Explore links, no member's address), from a snapshot — new data does not
change it until the snapshot is ten minutes old, and answering from it takes no query; revoked or expired
links answer 410, unknown ones 404. In a real browser the shared page draws its charts without a console
error (screenshots at 1400 and 1024 px)."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stacklens.control.db import session_scope
from stacklens.control.models import DashboardShare
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.widget_cache import widget_cache_for
from tests.browser import shots_dir, watch_errors
from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic

SHOTS = shots_dir("dashboards")
WIDGETS: list[dict[str, Any]] = [
    {
        "title": "Page loads",
        "kind": "number",
        "view": "performance.page_loads",
        "layout": {"x": 0, "y": 0, "w": 4, "h": 1},
    },
    {
        "title": "LCP p75 by release",
        "kind": "line",
        "query": {
            "dataset": "pageloads",
            "group_by": ["release"],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
            "interval": "1d",
        },
        "layout": {"x": 4, "y": 0, "w": 8, "h": 2},
    },
    {
        "title": "Pages",
        "kind": "table",
        "view": "performance.pages",
        "layout": {"x": 0, "y": 2, "w": 12, "h": 2},
    },
]


def _board(stores, org) -> int:
    with session_scope(stores) as session:
        return create_dashboard(
            session, org["org_id"], {"name": "Vitals", "filters": {"range": "30d"}, "widgets": WIDGETS}
        ).id


def test_share_on_the_page_open_signed_out_and_revoke(client: TestClient, org_factory, stores) -> None:
    acme = org_factory()
    land_demo_traffic(stores, acme["org_id"], acme["project_id"], days=6, per_day=10)
    board = _board(stores, acme)
    sign_in(client, acme["email"])
    path = f"/orgs/{acme['org_slug']}/dashboards/{board}"
    page = client.get(path).text
    made = client.post(path + "/share", data={"csrf_token": csrf_of(page), "expires_in_days": "7"})
    assert made.status_code == 200
    url = re.search(r'id="share-url" readonly value="([^"]+)"', made.text).group(1)
    # On the service's public address (the configured one, else the address served).
    assert re.fullmatch(r"http://[^/]+/share/dashboards/[A-Za-z0-9_-]{32}", url), url
    assert "Revoke 1 link" in client.get(path).text
    share_path = "/share/" + url.split("/share/", 1)[1]
    client.cookies.clear()  # signed out
    shared = client.get(share_path)
    assert shared.status_code == 200 and shared.headers["cache-control"] == "no-store"
    html = shared.text
    number = re.search(r'<p class="widget-number">([^<]+)</p>', html).group(1)
    assert (
        number == "60"
        and "LCP p75 by release" in html
        and 'data-figure="fig-widget-1"' in html
        and "/cart" in html
    )
    for private in ("csrf_token", "Explore ↗", "widget-menu", acme["email"], "Sign out", "/releases/"):
        assert private not in html, private
    # New page loads land; the snapshot answers as it was until it is ten minutes old.
    land_demo_traffic(stores, acme["org_id"], acme["project_id"], days=2, per_day=10)
    started = time.perf_counter()
    again = client.get(share_path).text
    elapsed = time.perf_counter() - started
    assert '<p class="widget-number">60</p>' in again and elapsed < 0.5, elapsed
    with session_scope(stores) as session:
        row = session.query(DashboardShare).one()
        assert row.snapshot_at is not None
        row.snapshot_at = row.snapshot_at - timedelta(minutes=11)
    # Ten minutes on, the widget answers kept for a minute (stacklens/explore/widget_cache.py) are gone too.
    widget_cache_for(stores).clear()
    assert '<p class="widget-number">80</p>' in client.get(share_path).text
    # Revoked from the page: 410 from the next request.
    sign_in(client, acme["email"])
    page = client.get(path).text
    assert (
        client.post(
            path + "/share/revoke", data={"csrf_token": csrf_of(page)}, follow_redirects=False
        ).status_code
        == 303
    )
    client.cookies.clear()
    gone = client.get(share_path)
    assert gone.status_code == 410 and "expired or was revoked" in gone.text
    assert client.get("/share/dashboards/nope").status_code == 404


def test_share_over_the_api(client: TestClient, org_factory, stores) -> None:
    acme, other = org_factory(), org_factory("Other")
    board = _board(stores, acme)
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    made = client.post(f"/api/dashboards/{board}/share", json={"expires_in_days": 1}, headers=auth)
    assert made.status_code == 201, made.text
    data = made.json()
    assert data["url"].startswith("/share/dashboards/") and data["absolute_url"].endswith(data["url"])
    assert client.get(data["url"]).status_code == 200
    assert (
        client.post(f"/api/dashboards/{board}/share", json={"expires_in_days": 0}, headers=auth).status_code
        == 400
    )
    theirs = {"Authorization": f"Bearer {other['api_key']}"}
    assert client.post(f"/api/dashboards/{board}/share", headers=theirs).status_code == 404
    assert client.delete(f"/api/dashboards/{board}/share", headers=theirs).status_code == 404
    assert client.delete(f"/api/dashboards/{board}/share", headers=auth).status_code == 204
    assert client.get(data["url"]).status_code == 410
    with session_scope(stores) as session:
        session.query(DashboardShare).update({"revoked_at": None})  # back, but expired:
        session.query(DashboardShare).update({"expires_at": DashboardShare.created_at})
    assert client.get(data["url"]).status_code == 410


@pytest.mark.browser
def test_the_shared_page_in_a_real_browser(chromium, server, org_factory, stores) -> None:

    from stacklens.explore.dashboard_shares import PATH, create_share

    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    board = _board(stores, org)
    with session_scope(stores) as session:
        _, token = create_share(session, org["org_id"], board, 7)
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    seen = {}
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own), CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(server + PATH.format(token=token))
        page.wait_for_selector("#plot-widget-1 .main-svg")
        seen[width] = page.evaluate(
            """() => ({traces: document.getElementById('plot-widget-1').data.length, csp: window.__csp,
              rows: document.querySelectorAll('#widget-2 tbody tr').length,
              overflow: Array.from(document.querySelectorAll('.widget')).filter(w => w.scrollWidth > w.clientWidth + 1).length})"""
        )
        page.screenshot(path=str(SHOTS / f"shared-{width}.png"), full_page=True)
    page.close()
    assert errors == []
    for width, got in seen.items():
        assert got == {"traces": 5, "csp": [], "rows": 5, "overflow": 0}, (width, got)
