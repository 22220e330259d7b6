"""The dashboards pages: create one, add a view and an Explore query ("Add to dashboard"), move, resize,
duplicate and delete widgets with CSRF-checked forms, keep the filter bar, export the JSON and import it
back; another organization's dashboard answers 404. In a real browser the widgets draw (lines, bars, a
number with its change, a table) without a console error or CSP violation, at 1400 and 1024 px (screenshots
in tests/_artifacts/dashboards)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, csrf_of, sign_in
from tests.dashboards.test_performance_browser import CSP_PROBE, land_demo_traffic

SHOTS = shots_dir("dashboards")
EXPLORE_QUERY = [
    ("dataset", "pageloads"),
    ("range", "14d"),
    ("interval", "1d"),
    ("g", "release"),
    ("a", "p75:lcp_ms"),
]


def _titles(html: str) -> list[str]:
    return re.findall(r'<h2 class="widget-title" title="[^"]*">([^<]*)</h2>', html)


def _post(client: TestClient, path: str, html: str, **data: Any):
    return client.post(path, data={"csrf_token": csrf_of(html), **data}, follow_redirects=False)


def test_build_edit_export_and_import_a_dashboard(client: TestClient, org_factory) -> None:
    acme = org_factory()
    sign_in(client, acme["email"])
    base = f"/orgs/{acme['org_slug']}/dashboards"
    listing = client.get(base).text
    assert 'id="dashboards-empty"' in listing and 'id="nav-dashboards"' in listing
    made = _post(client, base, listing, name="Release health", description="30 days")
    assert made.status_code == 303
    path = made.headers["location"]
    page = client.get(path).text
    assert 'id="dashboard-empty"' in page and "Release health" in page
    assert 'id="dashboard-as-of"' not in page  # no answer to date
    for view, kind in (
        ("performance.lcp", "number"),
        ("performance.page_loads", "bar"),
        ("performance.pages", "table"),
    ):
        assert _post(client, path + "/widgets", page, view=view, kind=kind).status_code == 303
    # Explore's "Add to dashboard" form posts the page's query string.
    explore = client.get(f"/orgs/{acme['org_slug']}/explore?" + urlencode(EXPLORE_QUERY)).text
    assert 'id="explore-add-to-dashboard"' in explore and "Release health</option>" in explore
    board_id = path.rsplit("/", 1)[1]
    added = _post(
        client,
        base + "/add-widget",
        explore,
        query=urlencode(EXPLORE_QUERY),
        dashboard_id=board_id,
        kind="line",
        title="",
    )
    assert added.status_code == 303 and added.headers["location"] == path
    page = client.get(path).text
    assert _titles(page) == ["LCP p75", "Page loads", "Pages", "LCP p75 (ms) · Page loads"]
    assert page.count('class="card widget w-6 h-2"') == 4
    assert 'class="muted widget-empty"' in page  # no data yet: each widget says so, no zero is drawn
    # The page says when its answers were taken: a question asked within the last minute is not asked again.
    assert re.search(r'id="dashboard-as-of">Answers as of \d\d:\d\d:\d\d UTC · .* kept for 60 s', page)
    # Edit: the second widget earlier, wider; the first duplicated; the copy deleted.
    for index, action in ((1, "earlier"), (0, "wider"), (2, "duplicate"), (3, "delete")):
        done = _post(client, f"{path}/widgets/{index}/{action}", page, back="range=7d")
        assert done.status_code == 303 and done.headers["location"] == path + "?range=7d"
    page = client.get(path).text
    assert _titles(page) == ["Page loads", "LCP p75", "Pages", "LCP p75 (ms) · Page loads"]
    assert 'class="card widget w-8 h-2" id="widget-0" data-kind="bar"' in page
    assert _post(client, f"{path}/widgets/9/delete", page).status_code == 400
    assert _post(client, f"{path}/widgets/0/explode", page).status_code == 400
    assert client.post(f"{path}/widgets/0/delete", data={"csrf_token": "x"}).status_code in (400, 403)
    # The filter bar: in the URL, kept as the dashboard's own on request.
    narrowed = client.get(path, params={"range": "7d", "environment": "production"}).text
    assert 'id="dashboard-keep-filters"' in narrowed and '<option value="7d" selected>' in narrowed
    assert "7d, production" in narrowed
    kept = _post(
        client, path + "/filters", narrowed, range="7d", environment="production", release="", project=""
    )
    assert kept.status_code == 303
    assert 'id="dashboard-keep-filters"' not in client.get(path).text
    bad = client.get(path, params={"range": "1y"}).text
    assert "filters.range: &#39;1y&#39; is not one of" in bad
    # Export, then import the file as a new dashboard: the same body.
    exported = client.get(path + "/export.json")
    assert exported.headers["content-disposition"] == 'attachment; filename="release-health.json"'
    body = exported.json()
    assert body["filters"]["environment"] == "production" and len(body["widgets"]) == 4
    imported = client.post(
        base + "/import",
        data={"csrf_token": csrf_of(page)},
        files={"file": ("board.json", json.dumps(body).encode(), "application/json")},
        follow_redirects=False,
    )
    assert imported.status_code == 303 and imported.headers["location"] != path
    assert client.get(imported.headers["location"] + "/export.json").json() == body
    refused = client.post(
        base + "/import",
        data={"csrf_token": csrf_of(page)},
        files={"file": ("x.json", b"{nope", "application/json")},
    )
    assert refused.status_code == 400 and "not a dashboard&#39;s JSON" in refused.text
    wrong = client.post(
        base + "/import",
        data={"csrf_token": csrf_of(page)},
        files={"file": ("x.json", b'{"name": "x", "widgets": [{"kind": "pie"}]}', "application/json")},
    )
    assert wrong.status_code == 400 and "widgets[0].kind" in wrong.text
    listing = client.get(base).text
    assert listing.count("Release health</a>") == 2
    # Another organization sees none of it.
    other = org_factory("Other")
    client.cookies.clear()
    sign_in(client, other["email"])
    assert client.get(path).status_code == 404
    assert client.get(path + "/export.json").status_code == 404
    their_page = client.get(f"/orgs/{other['org_slug']}/dashboards").text
    assert "Release health" not in their_page
    assert client.get(f"/orgs/{other['org_slug']}/dashboards/{board_id}").status_code == 404
    assert (
        _post(client, f"/orgs/{other['org_slug']}/dashboards/{board_id}/delete", their_page).status_code
        == 404
    )


@pytest.mark.browser
@pytest.mark.slow
def test_a_dashboard_in_a_real_browser(chromium, server, org_factory, stores) -> None:

    from demo.dashboards import ensure_demo_dashboard
    from stacklens.control.db import session_scope
    from stacklens.explore.dashboards import create_dashboard
    from stacklens.warehouse.client import get_warehouse
    from tests.demo import demo_sessions

    org = org_factory()
    land_demo_traffic(stores, org["org_id"], org["project_id"])
    demo_sessions.land(get_warehouse(stores), org["org_id"], org["project_id"])
    ensure_demo_dashboard(stores, org["project"])
    widgets = [
        {
            "title": "LCP p75",
            "kind": "number",
            "view": "performance.lcp",
            "layout": {"x": 0, "y": 0, "w": 3, "h": 1},
        },
        {
            "title": "Page loads",
            "kind": "number",
            "view": "performance.page_loads",
            "layout": {"x": 3, "y": 0, "w": 3, "h": 1},
        },
        {
            "title": "Errors per 1,000 page loads",
            "kind": "number",
            "view": "releases.errors_per_1k",
            "layout": {"x": 6, "y": 0, "w": 3, "h": 1},
        },
        {
            "title": "INP p75",
            "kind": "number",
            "view": "performance.inp",
            "layout": {"x": 9, "y": 0, "w": 3, "h": 1},
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
            "layout": {"x": 0, "y": 1, "w": 8, "h": 2},
        },
        {
            "title": "Page loads by browser",
            "kind": "bar",
            "query": {"dataset": "pageloads", "group_by": ["browser"], "aggregates": [{"fn": "count"}]},
            "layout": {"x": 8, "y": 1, "w": 4, "h": 2},
        },
        {
            "title": "Pages",
            "kind": "table",
            "view": "performance.pages",
            "layout": {"x": 0, "y": 3, "w": 12, "h": 2},
        },
    ]
    from datetime import UTC, datetime, timedelta

    from stacklens.annotations import create_annotation

    with session_scope(stores) as session:
        when = (datetime.now(UTC) - timedelta(days=3)).isoformat()
        create_annotation(session, org["org_id"], {"text": "deploy api", "tags": ["deploy"], "time": when})
        board = create_dashboard(
            session,
            org["org_id"],
            {"name": "Vitals", "filters": {"range": "14d"}, "widgets": widgets},
        )
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    shown: dict[int, Any] = {}
    demo: dict[int, Any] = {}
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own) and sign in again, CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{server}/orgs/{org['org_slug']}/dashboards/{board.id}")
        page.wait_for_selector("#plot-widget-5 .main-svg")
        shown[width] = page.evaluate(
            """() => ({
              numbers: Array.from(document.querySelectorAll('.widget-number')).map(n => n.textContent.trim()),
              changes: Array.from(document.querySelectorAll('.widget-change')).map(n => n.textContent.replace(/\\s+/g, ' ').trim()),
              traces: ['plot-widget-4', 'plot-widget-5'].map(id => document.getElementById(id).data.length),
              bars: document.getElementById('plot-widget-5').data[0].x,
              markers: (document.getElementById('plot-widget-4').layout.annotations || []).map(a => a.text),
              lines: (document.getElementById('plot-widget-4').layout.shapes || []).length,
              rows: document.querySelectorAll('#widget-6 tbody tr').length,
              empty: Array.from(document.querySelectorAll('.widget-empty')).map(n => n.closest('.widget').id),
              overflow: Array.from(document.querySelectorAll('.widget')).filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.id),
              csp: window.__csp,
              asOf: document.getElementById('dashboard-as-of').textContent,
            })"""
        )
        page.screenshot(path=str(SHOTS / f"dashboard-{width}.png"), full_page=True)
        # The demo's dashboard (the list links it) on the same traffic and the demo's sessions.
        page.goto(f"{server}/orgs/{org['org_slug']}/dashboards")
        page.click("#dashboards-table >> text=Release health and vitals")
        page.wait_for_selector("#plot-widget-4 .main-svg")
        demo[width] = page.evaluate(
            """() => ({
              errors: Array.from(document.querySelectorAll('.widget-error')).map(n => n.textContent),
              crashFree: document.querySelector('#widget-0 .widget-number').textContent.trim(),
              lines: document.getElementById('plot-widget-4').data.length,
            })"""
        )
        page.screenshot(path=str(SHOTS / f"demo-dashboard-{width}.png"), full_page=True)
    page.close()
    assert errors == []
    for width, seen in demo.items():
        assert seen["errors"] == [] and seen["crashFree"].endswith("%") and seen["lines"] >= 2, (width, seen)
    for width, seen in shown.items():
        assert seen["csp"] == [], width
        assert re.match(r"Answers as of \d\d:\d\d:\d\d UTC", seen["asOf"]), (width, seen["asOf"])
        # The last 14 of 21 days hold four of the five releases; one bar per browser.
        assert seen["traces"] == [4, 1] and sorted(seen["bars"]) == ["Chrome", "Firefox", "Safari"], seen
        assert seen["rows"] == 5 and seen["overflow"] == [] and seen["empty"] == [], seen
        # The releases first seen in the window (a link each) and the annotation, a dotted line each.
        assert "deploy" in seen["markers"] and seen["lines"] == len(seen["markers"]) >= 2, seen
        assert any(
            m.startswith('<a href="/orgs/') and m.endswith('shop%401.4.0">1.4.0</a>') for m in seen["markers"]
        ), seen
        lcp, loads, errors_rate, inp = seen["numbers"]
        assert lcp.endswith(" ms") and inp.endswith(" ms") and loads.replace(",", "").isdigit(), seen
        assert errors_rate == "0.0 per 1,000", seen  # no error event over the page loads: a true 0
        # Each number beside its previous 14 days (the traffic spans 21 days): a change, not "no value".
        assert all(re.search(r"[▲▼=] [+-]?[\d,.]+ % vs the previous 14d", c) for c in seen["changes"][:2]), (
            seen
        )


def test_subscribe_pause_and_delete_on_the_page(client: TestClient, org_factory, stores) -> None:
    from stacklens.control.db import session_scope
    from stacklens.explore.dashboards import create_dashboard

    acme = org_factory()
    with session_scope(stores) as session:
        board = create_dashboard(session, acme["org_id"], {"name": "Vitals"})
    sign_in(client, acme["email"])
    path = f"/orgs/{acme['org_slug']}/dashboards/{board.id}"
    page = client.get(path).text
    assert 'id="subscriptions-empty"' in page and f"me ({acme['email']})" in page
    form = {
        "every": "week",
        "weekday": "friday",
        "at": "07:30",
        "timezone": "Europe/Berlin",
        "format": "summary",
        "send_to": "me",
    }
    made = _post(client, path + "/subscriptions", page, **form)
    assert made.status_code == 303 and made.headers["location"] == path + "#subscriptions"
    page = client.get(path).text
    assert "weekly on friday at 07:30 Europe/Berlin" in page and f"Reports to {acme['email']}" in page
    bad = _post(client, path + "/subscriptions", page, **{**form, "timezone": "Mars/Olympus"})
    assert (
        bad.status_code == 400 and "schedule.timezone: &#39;Mars/Olympus&#39; is not a time zone" in bad.text
    )
    found = re.search(r"/subscriptions/(\d+)/pause", page)
    assert found is not None
    sub_id = found.group(1)
    assert _post(client, f"/orgs/{acme['org_slug']}/subscriptions/{sub_id}/pause", page).status_code == 303
    page = client.get(path).text
    assert "<td>paused</td>" in page and f"/subscriptions/{sub_id}/resume" in page
    assert _post(client, f"/orgs/{acme['org_slug']}/subscriptions/{sub_id}/delete", page).status_code == 303
    page = client.get(path).text
    assert 'id="subscriptions-empty"' in page
    # The dashboard as a PDF: offered on the form, listed with its format.
    assert '<option value="pdf">PDF (e-mail attachment)</option>' in page
    assert _post(client, path + "/subscriptions", page, **{**form, "format": "pdf"}).status_code == 303
    assert "<td>pdf</td>" in client.get(path).text
    # Shared channels are offered; another member's report mail and a personal channel never are (issue 70).
    from sqlalchemy import select

    from stacklens.control.models import AlertChannel, User

    with session_scope(stores) as session:
        owner = session.scalars(select(User).where(User.email == acme["email"])).one()
        made_channels = [
            AlertChannel(
                org_id=acme["org_id"], name=name, type="email", config={"to": [to]}, personal_user_id=who
            )
            for name, to, who in (
                ("team", "team@acme.test", None),
                ("Reports to ann@acme.test", "ann@acme.test", None),
                ("Issue mail", acme["email"], owner.id),
            )
        ]
        session.add_all(made_channels)
        session.flush()
        team, ann, personal = (c.id for c in made_channels)
    page = client.get(path).text
    offered = re.search(r'<select name="send_to">(.*?)</select>', page, re.S)
    assert offered is not None and f'<option value="{team}">team</option>' in offered.group(1)
    assert f'value="{ann}"' not in offered.group(1) and f'value="{personal}"' not in offered.group(1)
    refused = _post(client, path + "/subscriptions", page, **{**form, "send_to": str(ann)})
    assert refused.status_code == 400 and "another member&#39;s own" in refused.text, refused.text
    # Channels of the organization are offered too.
    other = org_factory("Other")
    client.cookies.clear()
    sign_in(client, other["email"])
    their = client.get(f"/orgs/{other['org_slug']}/dashboards").text
    assert (
        _post(
            client, f"/orgs/{other['org_slug']}/dashboards/{board.id}/subscriptions", their, **form
        ).status_code
        == 400
    )
