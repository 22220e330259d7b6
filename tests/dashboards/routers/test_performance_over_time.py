"""The performance pages across weeks and releases (dashboards/routers/performance_over_time.py): the trends
page's neighbouring charts share their x axis."""

from __future__ import annotations

import html
import json
import re

import pytest

from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.stacklens.performance.perf_seed import seed


@pytest.fixture
def seeded(client, org_factory, stores):
    org = org_factory()
    data = seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=240)
    sign_in(client, org["email"])
    return org, data


def _base(org: dict) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/performance"


def test_trends_neighbouring_charts_share_their_x_axis(client, seeded) -> None:
    """Issue #47: at 90 days the line (every week of the window) and the bars (the weeks with page loads)
    drew the same weeks at different places; both now span every week, at the same positions."""
    org, _ = seeded
    page = client.get(_base(org) + "/trends", params={"range": "90d"}).text
    figures = {
        name: json.loads(html.unescape(body))
        for name, body in re.findall(r'id="fig-(weekly-[a-z]+)">(.*?)</script>', page, re.S)
    }
    load, views = figures["weekly-load"], figures["weekly-views"]
    assert load["data"][0]["x"] == views["data"][0]["x"] and len(load["data"][0]["x"]) >= 13
    assert load["layout"]["xaxis"]["range"] == views["layout"]["xaxis"]["range"]
    assert load["layout"]["xaxis"]["categoryarray"] == views["layout"]["xaxis"]["categoryarray"]
    assert None in views["data"][0]["y"]  # weeks before the data: a slot without a bar, not left out
