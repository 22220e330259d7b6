""" "Keep these filters" keeps the whole filter bar as the dashboard's own: range, project, environment and
release, each variable's chosen value as its default and the refresh pace — what the page opens with, what
the API answers, what an export holds and what a scheduled report uses. A fixed list's value it does not
hold is refused naming the field."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient

from stacklens.control.db import session_scope
from stacklens.explore.dashboards import create_dashboard, get_dashboard
from stacklens.explore.reports import report_widgets
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.test_performance_browser import land_demo_traffic

VARIABLES = [
    {"name": "page", "column": "page"},
    {"name": "tier", "values": ["free", "gold"], "default": "free"},
]
WIDGET: dict[str, Any] = {
    "title": "Page loads",
    "kind": "line",
    "query": {"dataset": "pageloads", "aggregates": [{"fn": "count"}], "interval": "1d"},
    "layout": {"x": 0, "y": 0, "w": 12, "h": 2},
}


def _hidden(html: str) -> dict[str, str]:
    """The inputs the page's "Keep these filters" form posts (what a click sends)."""
    form = re.search(r'<form[^>]*id="dashboard-keep-filters"[^>]*>(.*?)</form>', html, re.S)
    assert form is not None, "no Keep these filters button"
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(1)))


def test_keep_these_filters_keeps_variables_and_refresh(client: TestClient, org_factory, stores) -> None:
    acme = org_factory()
    land_demo_traffic(stores, acme["org_id"], acme["project_id"])
    sign_in(client, acme["email"])
    with session_scope(stores) as session:
        board = create_dashboard(
            session,
            acme["org_id"],
            {"name": "Kept", "filters": {"range": "30d"}, "variables": VARIABLES, "widgets": [WIDGET]},
        )
    path = f"/orgs/{acme['org_slug']}/dashboards/{board.id}"
    assert 'id="dashboard-keep-filters"' not in client.get(path).text  # nothing chosen yet
    # Only a variable chosen (the filters as saved): the button is offered, and posts the variables too.
    page = client.get(path, params={"var-page": "/checkout", "var-tier": "gold", "refresh": "1m"}).text
    sent = _hidden(page)
    assert sent["var-page"] == "/checkout" and sent["var-tier"] == "gold" and sent["refresh"] == "1m", sent
    kept = client.post(path + "/filters", data=sent, follow_redirects=False)
    assert kept.status_code == 303 and kept.headers["location"] == path
    with session_scope(stores) as session:
        saved = get_dashboard(session, acme["org_id"], board.id)
    assert [v["default"] for v in saved.variables] == ["/checkout", "gold"] and saved.refresh == "1m"
    assert saved.filters["range"] == "30d"
    # The page opens with them (no button: nothing left to keep), the API and the export hold them.
    opened = client.get(path).text
    assert 'id="dashboard-keep-filters"' not in opened
    assert '<option value="gold" selected>gold</option>' in opened
    assert '<option value="/checkout" selected>/checkout</option>' in opened
    assert 'value="1m" selected' in opened
    exported = client.get(path + "/export.json").json()
    assert exported["variables"][0]["default"] == "/checkout" and exported["refresh"] == "1m"
    api = client.get(
        f"/api/dashboards/{board.id}", headers={"Authorization": f"Bearer {acme['api_key']}"}
    ).json()
    assert [v["default"] for v in api["variables"]] == ["/checkout", "gold"], api
    # A scheduled report answers the widget with the kept value, and says which.
    with session_scope(stores) as session:
        widgets, named = report_widgets(
            get_warehouse(stores), session, acme["org_id"], saved, datetime.now(UTC)
        )
    assert named == "$page = /checkout, $tier = gold"
    assert {"field": "page", "op": "=", "value": "/checkout"} in widgets[0]["query"]["filters"]
    # Back to "all": an empty value is kept as the default too.
    page = client.get(path, params={"var-page": ""}).text
    sent = _hidden(page)
    assert sent["var-page"] == "" and sent["var-tier"] == "gold", sent
    assert client.post(path + "/filters", data=sent, follow_redirects=False).status_code == 303
    with session_scope(stores) as session:
        assert get_dashboard(session, acme["org_id"], board.id).variables[0]["default"] == ""
    # A value a fixed list does not hold is refused, naming the field; nothing is kept.
    refused = client.post(
        path + "/filters", data={**sent, "var-tier": "platinum", "csrf_token": csrf_of(page)}
    )
    assert refused.status_code == 400 and "var-tier" in refused.text, refused.text
    with session_scope(stores) as session:
        assert get_dashboard(session, acme["org_id"], board.id).variables[1]["default"] == "gold"
