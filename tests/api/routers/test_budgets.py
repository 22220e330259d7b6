"""Budgets API: org-scoped CRUD, validation, 404 across organizations, the latest evaluation in answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from pipelines.definitions import definitions_for
from pipelines.embedded import dagster_instance, materialize_now
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    apply_migrations(settings)  # every layer: the budgets read the performance states the pipelines build
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def auth(org: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_budget_crud_is_validated_and_org_scoped(client: TestClient, settings: Settings, make_org) -> None:
    from datetime import UTC, datetime

    from stacklens.warehouse.client import get_warehouse
    from tests.stacklens.performance.budget_seed import page_loads

    acme, other = make_org("Acme"), make_org("Other", project="Other App")
    # A scoped budget needs a page seen: one page load of /checkout.
    page_loads(
        get_warehouse(settings), acme["org_id"], acme["project_id"], "/checkout", datetime.now(UTC), [900.0]
    )
    url = f"/api/projects/{acme['project']}/budgets"
    assert client.get(url).status_code == 401
    created = client.post(url, json={"metric": "js_bytes", "value": 300000}, headers=auth(acme))
    assert created.status_code == 201, created.text
    budget = created.json()
    assert budget["scope"] == "*" and budget["unit"] == "bytes" and budget["current_value"] is None
    page = client.post(
        url, json={"metric": "lcp_ms", "scope": "/checkout", "value": 2500}, headers=auth(acme)
    )
    assert page.status_code == 201
    assert client.post(url, json={"metric": "js_bytes", "value": 1}, headers=auth(acme)).status_code == 409
    for bad in (
        {"metric": "speed", "value": 1},
        {"metric": "lcp_ms", "value": -1},
        {"metric": "lcp_ms", "scope": "checkout", "value": 1},
    ):
        answer = client.post(url, json=bad, headers=auth(acme))
        assert answer.status_code == 400 and answer.json()["error"] == "Bad Request", bad
    listed = client.get(url, headers=auth(acme)).json()["budgets"]
    assert [(b["metric"], b["scope"]) for b in listed] == [("js_bytes", "*"), ("lcp_ms", "/checkout")]

    # Another organization sees neither the project nor the budget, exactly like missing ones.
    assert client.get(url, headers=auth(other)).status_code == 404
    assert client.post(url, json={"metric": "cls", "value": 0.1}, headers=auth(other)).status_code == 404
    assert (
        client.put(f"/api/budgets/{budget['id']}", json={"value": 1}, headers=auth(other)).status_code == 404
    )
    assert client.delete(f"/api/budgets/{budget['id']}", headers=auth(other)).status_code == 404
    assert (
        client.get(f"/api/projects/{other['project']}/budgets", headers=auth(other)).json()["budgets"] == []
    )

    changed = client.put(f"/api/budgets/{budget['id']}", json={"value": 250000}, headers=auth(acme))
    assert changed.status_code == 200 and changed.json()["value"] == 250000
    clash = client.put(
        f"/api/budgets/{budget['id']}",
        json={"metric": "lcp_ms", "scope": "/checkout", "value": 1},
        headers=auth(acme),
    )
    assert clash.status_code == 409
    assert client.delete(f"/api/budgets/{budget['id']}", headers=auth(acme)).status_code == 204
    assert client.delete(f"/api/budgets/{budget['id']}", headers=auth(acme)).status_code == 404
    assert len(client.get(url, headers=auth(acme)).json()["budgets"]) == 1


def test_answers_carry_the_status_from_the_mart_or_evaluated_now(
    client: TestClient, settings: Settings, make_org
) -> None:
    acme = make_org("Acme")
    url = f"/api/projects/{acme['project']}/budgets"
    created = client.post(url, json={"metric": "load_time_ms", "value": 1000}, headers=auth(acme))
    assert created.status_code == 201
    # No data yet: insufficient data, never a pass — evaluated on read before the first budgets run.
    body = created.json()
    assert (body["status"], body["current_value"], body["samples"]) == ("insufficient_data", None, 0)
    assert body["statistic"] == "p75" and body["window_days"] == 7 and body["min_samples"] == 20
    instance = dagster_instance(settings)
    try:
        outcomes = materialize_now(definitions_for(settings), instance, ["budget_status"])
    finally:
        instance.dispose()
    assert outcomes[0].success and outcomes[0].checks["budget_status:budgets_evaluated"] is True
    (evaluated,) = client.get(url, headers=auth(acme)).json()["budgets"]
    assert evaluated["status"] == "insufficient_data" and evaluated["current_value"] is None
    # The answer is the mart's row (evaluated by the run), not a new evaluation.
    from stacklens.warehouse.client import get_warehouse

    (mart_at,) = get_warehouse(settings).query("SELECT max(evaluated_at) FROM budget_status").result_rows[0]
    assert evaluated["evaluated_at"].startswith(mart_at.strftime("%Y-%m-%dT%H:%M:%S"))


def test_statuses_downloads_lighthouse_and_bad_input(
    client: TestClient, settings: Settings, make_org
) -> None:
    from datetime import UTC, datetime, timedelta

    from stacklens.warehouse.client import get_warehouse
    from tests.stacklens.performance.budget_seed import bucketed, fold, page_loads

    acme, other = make_org("Acme"), make_org("Other", project="Other App")
    warehouse = get_warehouse(settings)
    at = datetime.now(UTC) - timedelta(hours=3)
    page_loads(warehouse, acme["org_id"], acme["project_id"], "/checkout", at, [3000.0] * 5, js_bytes=200_000)
    fold(warehouse, days=1)
    url = f"/api/projects/{acme['project']}/budgets"
    for body in (
        {"metric": "lcp_ms", "scope": "/checkout", "value": 2500, "min_samples": 5},
        {"metric": "js_bytes", "value": 300_000, "min_samples": 5, "window": "14d"},
        {"metric": "load_time_ms", "value": 4000, "statistic": "p95"},
    ):
        assert client.post(url, json=body, headers=auth(acme)).status_code == 201, body
    listed = client.get(url, headers=auth(acme)).json()["budgets"]
    assert [(b["metric"], b["status"], b["current_value"], b["samples"]) for b in listed] == [
        ("js_bytes", "pass", 200_000.0, 5),
        ("lcp_ms", "fail", bucketed(3000), 5),  # the p75 of five equal loads, as the states keep it
        ("load_time_ms", "insufficient_data", bucketed(3000), 5),
    ]
    lcp = listed[1]
    assert lcp["margin"] == 2500 - bucketed(3000) and lcp["failing_since"] and listed[0]["window_days"] == 14
    as_csv = client.get(url, params={"format": "csv"}, headers=auth(acme))
    assert as_csv.headers["content-type"].startswith("text/csv") and as_csv.text.startswith(
        "id,project,metric,"
    )
    assert len(as_csv.text.strip().splitlines()) == 4 and ",fail," in as_csv.text
    assert (
        client.get(url, params={"format": "json"}, headers=auth(acme)).json()["budgets"][1]["status"]
        == "fail"
    )

    for bad, field in (
        ({"metric": "speed", "value": 1}, "metric"),
        ({"metric": "lcp_ms", "value": -1}, "value"),
        ({"metric": "cls", "value": 0.1, "window": 0}, "window"),
        ({"metric": "cls", "value": 0.1, "scope": "/nowhere"}, "scope"),
        ({"metric": "lcp_ms", "value": 1, "statistic": "p95"}, "statistic"),
    ):
        answer = client.post(url, json=bad, headers=auth(acme))
        assert answer.status_code == 400 and answer.json()["detail"].startswith(f"{field}:"), answer.json()

    lighthouse = f"{url}/lighthouse"
    exported = client.get(lighthouse, headers=auth(acme))
    assert exported.json() == [
        {"path": "/*", "resourceSizes": [{"resourceType": "script", "budget": 292.96875}]},
        {"path": "/checkout$", "timings": [{"metric": "largest-contentful-paint", "budget": 2500.0}]},
    ]
    assert "load_time_ms p95 on *" in exported.headers["x-budgets-not-exported"]
    not_json = client.post(lighthouse, content=b"budgets: yes", headers=auth(acme))
    assert not_json.status_code == 400 and not_json.json()["detail"].startswith("budget.json: is not JSON")
    half = [
        {"path": "/checkout", "timings": [{"metric": "first-contentful-paint", "budget": 1000}]},
        {"path": "/gone", "timings": [{"metric": "largest-contentful-paint", "budget": 1000}]},
    ]
    refused = client.post(lighthouse, json=half, headers=auth(acme))
    assert (
        refused.status_code == 400
        and "budget.json[1].timings[0]: scope: '/gone' matches no page" in refused.json()["detail"]
    )
    assert len(client.get(url, headers=auth(acme)).json()["budgets"]) == 3  # nothing saved half
    imported = client.post(lighthouse, json=[*exported.json(), *half[:1]], headers=auth(acme)).json()
    assert (imported["created"], imported["updated"], imported["not_mapped"]) == (1, 2, [])
    assert client.get(lighthouse, headers=auth(other)).status_code == 404
    assert client.post(lighthouse, json=half[:1], headers=auth(other)).status_code == 404
    assert client.get(url, params={"format": "csv"}, headers=auth(other)).status_code == 404


def test_an_alert_rule_from_a_budget_takes_its_definition(client: TestClient, make_org) -> None:
    acme = make_org("Acme")
    budget = client.post(
        f"/api/projects/{acme['project']}/budgets",
        json={"metric": "load_time_ms", "value": 3000, "statistic": "p95", "window": 14, "min_samples": 5},
        headers=auth(acme),
    ).json()
    rule = client.post("/api/alerts/rules", json={"budget_id": budget["id"]}, headers=auth(acme))
    assert rule.status_code == 201, rule.text
    got = rule.json()
    assert (got["metric"], got["statistic"], got["threshold"], got["window"], got["min_samples"]) == (
        "load_time_ms",
        "p95",
        3000,
        "14d",
        5,
    )
