"""Anomaly rules through the API (issue #67): created with their seasonality, sensitivity, direction and
minimum count; `POST /api/alerts/rules/backtest` (a rule's body, nothing saved) and
`POST /api/alerts/rules/{id}/backtest` answer every hour's value, expected value and band and the hours that
would have fired, with the releases near them; bad input is a 400 naming the field and what is allowed,
with nothing saved; another organization's rule is a 404."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.alerts.evaluation import evaluate
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


def last_hour() -> datetime:
    """The last complete hour, read when a test seeds (a constant read at collection is an hour stale in a
    run that crosses the hour)."""
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)


EV = [
    "org_id",
    "project_id",
    "event_id",
    "issue_id",
    "fingerprint",
    "timestamp",
    "received_at",
    "title",
    "level",
    "release",
    "environment",
    "user_key",
]


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    override_settings(settings)
    apply_migrations(settings)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def auth(org: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def _seed(settings: Settings, org: dict, per_hour: int = 12, burst: int = 200) -> datetime:
    """Nine days of one error at a steady rate, and a burst in the last complete hour (returned)."""
    hour = last_hour()
    rows = []
    for h in range(9 * 24, 0, -1):
        at = hour - timedelta(hours=h - 1)
        n = burst if h == 1 else per_hour + (h * 7) % 5
        rows += [
            [
                int(org["org_id"]),
                int(org["project_id"]),
                uuid.uuid4(),
                1,
                "fp",
                at + timedelta(seconds=i),
                at,
                "TypeError",
                "error",
                "1.0",
                "production",
                f"u{i}",
            ]
            for i in range(n)
        ]
    get_warehouse(settings).insert("events", rows, column_names=EV)
    return hour


BODY = {
    "name": "Errors",
    "type": "anomaly",
    "metric": "events",
    "seasonality": "daily",
    "sensitivity": "high",
}


def test_anomaly_rule_and_its_backtests(client, make_org, settings) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    hour = _seed(settings, acme)
    body = {**BODY, "project": acme["project"]}
    created = client.post("/api/alerts/rules", json=body, headers=auth(acme))
    assert created.status_code == 201, created.text
    rule = created.json()
    assert (rule["type"], rule["metric"], rule["scope"], rule["window"]) == ("anomaly", "events", "*", "28d")
    assert (rule["seasonality"], rule["sensitivity"], rule["direction"], rule["min_count"]) == (
        "daily",
        "high",
        "up",
        10,
    )
    unsaved = client.post("/api/alerts/rules/backtest", json={**body, "days": 7}, headers=auth(acme))
    saved = client.post(f"/api/alerts/rules/{rule['id']}/backtest", json={"days": 7}, headers=auth(acme))
    assert unsaved.status_code == 200 and saved.status_code == 200, unsaved.text
    assert unsaved.json() == saved.json()
    got = saved.json()
    assert len(got["points"]) == 7 * 24
    assert set(got["points"][0]) == {"time", "value", "expected", "lower", "upper", "score"}
    last = got["points"][-1]
    assert last["time"] == hour.isoformat().replace("+00:00", "Z") and last["value"] == 200
    assert last["lower"] <= last["expected"] <= last["upper"] < 200
    assert [f["time"] for f in got["fires"]] == [last["time"]]
    fire = got["fires"][0]
    assert {"time", "value", "expected", "lower", "upper", "score", "releases"} <= set(fire)
    assert fire["score"] > 3.5 and fire["releases"] == [] and fire["seasonality"] == "daily"
    # Another organization: the rule is not there.
    assert (
        client.post(f"/api/alerts/rules/{rule['id']}/backtest", json={}, headers=auth(other)).status_code
        == 404
    )
    assert client.get("/api/alerts/rules", headers=auth(acme)).json()["rules"][0]["id"] == rule["id"]
    # The tick fires it; the API says why, as the notification does.
    evaluate(settings, get_warehouse(settings), "http://sl.test")
    answer = client.get(f"/api/alerts/rules/{rule['id']}", headers=auth(acme)).json()
    assert answer["states"][0]["state"] == "firing" and answer["states"][0]["value"] == 200
    assert (
        answer["last_decision"].startswith("firing: 200 events, expected ")
        and ", daily" in answer["last_decision"]
    )


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"metric": "lcp"}, "metric: unknown metric 'lcp'; use one of events, users, crash_free_sessions"),
        (
            {"sensitivity": "extreme"},
            "sensitivity: unknown sensitivity 'extreme'; use one of low, medium, high",
        ),
        (
            {"seasonality": "monthly"},
            "seasonality: unknown seasonality 'monthly'; use one of auto, daily, weekly, none",
        ),
        ({"direction": "sideways"}, "direction: unknown direction 'sideways'; use one of up, down, both"),
        (
            {"seasonality": "weekly", "window": "7d"},
            "window: an anomaly rule with weekly seasonality learns from",
        ),
        ({"min_count": -1}, "min_count: must be a whole number from 0 to 1000000"),
        ({"scope": "/checkout"}, "scope: events are counted per project (*) or per issue (its id)"),
    ],
)
def test_bad_anomaly_input_names_the_field_and_saves_nothing(client, make_org, change, detail) -> None:
    acme = make_org("Acme")
    body = {**BODY, "project": acme["project"], **change}
    for path in ("/api/alerts/rules", "/api/alerts/rules/backtest"):
        answer = client.post(path, json=body, headers=auth(acme))
        assert answer.status_code == 400 and answer.json()["detail"].startswith(detail), answer.text
    assert client.get("/api/alerts/rules", headers=auth(acme)).json()["rules"] == []


def test_a_backtest_shorter_than_two_seasons_is_refused(client, make_org) -> None:
    acme = make_org("Acme")
    body = {**BODY, "project": acme["project"], "seasonality": "weekly"}
    short = client.post("/api/alerts/rules/backtest", json={**body, "days": 10}, headers=auth(acme))
    assert short.status_code == 400
    assert short.json()["detail"] == (
        "days: 10 days is shorter than two seasons of weekly seasonality; use at least 14 days (up to 28)"
    )
    for days in (3, 29, "two"):
        answer = client.post("/api/alerts/rules/backtest", json={**body, "days": days}, headers=auth(acme))
        assert answer.status_code == 400 and answer.json()["detail"].startswith(
            "days: must be a whole number"
        )
    other = client.post("/api/alerts/rules/backtest", json={**body, "type": "new_issue"}, headers=auth(acme))
    assert other.status_code == 400 and other.json()["detail"].startswith("type: a backtest is of an anomaly")
