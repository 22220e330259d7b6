"""A small installation with something of everything a restore must give back (events through the front door,
issues, a budget, an alert rule, keys), and its answers through the API, to compare before and after."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from stacklens.settings import Settings
from tests.conftest import make_settings


def _fail(kind: int) -> None:
    errors: list[type[Exception]] = [KeyError, ValueError, TypeError]
    raise errors[kind % 3](f"failure {kind}")


def event_payload(kind: int) -> dict[str, Any]:
    from tests.dashboards.landing import sdk_event

    payload = sdk_event(lambda: _fail(kind), tags={"tenant": f"t{kind % 2}"})
    payload["event_id"] = uuid.uuid4().hex
    return payload


def ingest(client: TestClient, org: dict[str, Any], payloads: list[dict[str, Any]]) -> None:
    body = b"\n".join(
        json.dumps({"v": 1, "type": "event", "app_key": org["app_key"], "payload": p}).encode()
        for p in payloads
    )
    answer = client.post(
        "/api/ingest",
        content=body,
        headers={"Authorization": f"Bearer {org['api_key']}", "Content-Type": "application/x-ndjson"},
    )
    assert answer.status_code == 200 and answer.json()["accepted"] == len(payloads), answer.text


@dataclass
class Filled:
    org: dict[str, Any]
    budget_id: int
    rule_id: int


def fill(client: TestClient, org: dict[str, Any], events: int = 9) -> Filled:
    ingest(client, org, [event_payload(n) for n in range(events)])
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    budget = client.post(
        f"/api/projects/{org['project']}/budgets",
        json={"metric": "lcp_ms", "scope": "*", "value": 2500},
        headers=auth,
    )
    assert budget.status_code == 201, budget.text
    rule = client.post(
        "/api/alerts/rules",
        json={
            "name": "Checkout LCP",
            "type": "performance_budget",
            "project": org["project"],
            "metric": "lcp_ms",
            "statistic": "p75",
            "threshold": 2500,
            "window": "7d",
            "min_samples": 20,
            "channels": [],
        },
        headers=auth,
    )
    assert rule.status_code == 201, rule.text
    return Filled(org, budget.json()["id"], rule.json()["id"])


def answers(client: TestClient, filled: Filled) -> dict[str, Any]:
    """What the API answers about everything :func:`fill` made (volatile fields such as "now" removed)."""
    org = filled.org
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    issues = client.get(f"/api/projects/{org['project']}/issues", headers=auth, params={"limit": 100})
    assert issues.status_code == 200, issues.text
    listed = issues.json()["issues"]
    for issue in listed:  # the window the figures cover ends at the current minute: now
        issue.pop("since", None)
        issue.pop("until", None)
    events = {
        issue["id"]: client.get(f"/api/issues/{issue['id']}/events", headers=auth).json() for issue in listed
    }
    budgets = client.get(f"/api/projects/{org['project']}/budgets", headers=auth).json()["budgets"]
    for budget in budgets:
        budget.pop("evaluated_at")  # when the answer was computed: now
    rule = client.get(f"/api/alerts/rules/{filled.rule_id}", headers=auth).json()
    key = client.post("/api/keys/api/reveal", headers=auth)
    assert key.status_code == 200, key.text
    return {
        "issues": listed,
        "events": events,
        "budgets": budgets,
        "rule": rule,
        "api_key": key.json(),
    }


def fresh_settings(tmp_path: Path, like: Settings, name: str = "restored") -> Settings:
    """Settings of an empty data directory on the same engine (a test process has one chdb path), with the
    same secret, as an operator restoring on a new host with the secret at hand would have."""
    data_dir = tmp_path / name
    data_dir.mkdir()
    return make_settings(data_dir, like.resolved_warehouse_url)


def restored_answers(target: Settings, filled: Filled, issue_ids: list[str] | None = None) -> dict[str, Any]:
    """:func:`answers` of a server app on the restored ``target`` (and its :func:`pages` of ``issue_ids``)."""
    from stacklens.cli.app import build_app
    from stacklens.settings import override_settings

    override_settings(target)
    with TestClient(build_app(target)) as restored:
        found = answers(restored, filled)
        if issue_ids is not None:
            found["pages"] = pages(restored, filled, issue_ids)
        return found


_VOLATILE = re.compile(
    r'name="csrf_token" value="[^"]*"|nonce="[^"]*"|<time[^>]*>.*?</time>|\b\d+ (?:seconds?|minutes?|hours?) ago\b'
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00"  # "now", the right edge of a chart's window
    # A chart's axis range: its window to the minute, which the next minute moves (the two renders compared
    # are seconds apart, and under load a minute's edge falls between them now and then).
    r'|"range":\["\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d","\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"\]'
    r"|(?:since|until)=\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\dZ"  # the same window in a link to Explore
)


def pages(client: TestClient, filled: Filled, issue_ids: list[str]) -> dict[str, str]:
    """The dashboards' pages of :func:`fill`'s project as its owner sees them (signed in on ``client``), with
    what changes from one request to the next (form tokens, nonces, "… ago") taken out."""
    from tests.dashboards.conftest import sign_in

    org = filled.org
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}"
    paths = [f"{base}/issues", f"{base}/performance/budgets", f"/orgs/{org['org_slug']}/alerts"]
    paths += [f"{base}/issues/{issue_id}" for issue_id in issue_ids]
    out = {}
    for path in paths:
        page = client.get(path)
        assert page.status_code == 200, (path, page.status_code)
        out[path] = _VOLATILE.sub("", page.text)
    return out
