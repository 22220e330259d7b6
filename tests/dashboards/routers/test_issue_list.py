"""The issue list page: the per-page control (kept by the next-page link, bad values refused), and the issue
page's events-over-time chart carries titled axes."""

from __future__ import annotations

import html
import json
import re
import uuid
from datetime import UTC, datetime, timedelta

from dashboards.figures import events_over_time_figure
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land


def _issues(n: int) -> list[dict]:
    return [
        {
            "event_id": uuid.uuid4().hex,
            "message": f"problem number {i}",
            "fingerprint": [f"problem-{i}"],
            "level": "error",
            "platform": "python",
            "timestamp": (datetime.now(UTC) - timedelta(minutes=i + 1)).isoformat(),
        }
        for i in range(n)
    ]


def test_per_page_control_and_chart_axes(client, org_factory) -> None:
    org = org_factory()
    rows = land(org["org_id"], org["project_id"], _issues(12))
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"

    default = client.get(base).text
    assert default.count('class="issue-row"') == 12 and 'rel="next"' not in default
    assert '<option value="25" selected>' in default

    first = client.get(base, params={"per_page": "10"}).text
    assert first.count('class="issue-row"') == 10 and '<option value="10" selected>' in first
    next_href = html.unescape(re.search(r'rel="next" href="([^"]+)"', first).group(1))
    assert "per_page=10" in next_href
    second = client.get(next_href).text
    assert second.count('class="issue-row"') == 2
    shown = set(re.findall(r'name="issue_ids" value="(\d+)"', first + second))
    assert shown == {str(row["issue_id"]) for row in rows}

    for bad in ("7", "x", "1000"):
        refused = client.get(base, params={"per_page": bad})
        assert refused.status_code == 400 and "per page must be one of 10, 25, 50, 100" in refused.text

    detail = client.get(f"{base}/{rows[0]['issue_id']}", params={"range": "24h"}).text
    block = re.search(r'id="figure-json">(.*?)</script>', detail, re.S).group(1)
    layout = json.loads(block)["layout"]
    assert layout["xaxis"]["title"]["text"] == "Time (UTC)"
    assert layout["yaxis"]["title"]["text"] == "Events per hour"
    assert layout["title"]["text"] == "Events per hour"
    assert sum(json.loads(block)["data"][0]["y"]) == 1


def test_chart_bucket_names_follow_the_range() -> None:
    until = datetime(2026, 1, 10)
    for span, name in (
        (timedelta(hours=1), "5 minutes"),
        (timedelta(days=1), "hour"),
        (timedelta(days=30), "day"),
    ):
        layout = events_over_time_figure([], until - span, until)["layout"]
        assert layout["yaxis"]["title"]["text"] == f"Events per {name}"
        assert layout["xaxis"]["title"]["text"] == "Time (UTC)"
