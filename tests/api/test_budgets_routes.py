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
    apply_migrations(settings, up_to=199)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def auth(org: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_budget_crud_is_validated_and_org_scoped(client: TestClient, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other", project="Other App")
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


def test_answers_carry_the_latest_evaluation(client: TestClient, settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    url = f"/api/projects/{acme['project']}/budgets"
    created = client.post(url, json={"metric": "load_time_ms", "value": 1000}, headers=auth(acme))
    assert created.status_code == 201
    instance = dagster_instance(settings)
    try:
        outcomes = materialize_now(definitions_for(settings), instance, ["budget_status"])
    finally:
        instance.dispose()
    assert outcomes[0].success and outcomes[0].checks["budget_status:budgets_within_limits"] is True
    (evaluated,) = client.get(url, headers=auth(acme)).json()["budgets"]
    assert evaluated["passed"] is True and evaluated["current_value"] is None and evaluated["evaluated_at"]
