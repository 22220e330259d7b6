"""Dashboards over the real API app: create, list, read, replace and delete with the organization's key; a bad
field answers 400 naming it; another organization's dashboard answers 404 and never shows in the list; a body
exported by GET goes back through POST unchanged."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

BODY: dict[str, Any] = {
    "name": "Release health",
    "description": "the last 30 days",
    "filters": {"range": "30d", "environment": "production", "release": "", "project": ""},
    "widgets": [
        {
            "title": "Crash-free sessions",
            "kind": "line",
            "view": "releases.crash_free_sessions",
            "layout": {"x": 0, "y": 0, "w": 6, "h": 2},
        },
        {
            "title": "LCP p75",
            "kind": "number",
            "query": {
                "dataset": "pageloads",
                "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
                "range": "7d",
            },
            "layout": {"x": 6, "y": 0, "w": 3, "h": 1},
        },
    ],
}


def _auth(org: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_crud_within_the_organization(client: TestClient, org_factory) -> None:
    acme, other = org_factory("Acme"), org_factory("Other")
    created = client.post("/api/dashboards", json=BODY, headers=_auth(acme))
    assert created.status_code == 201, created.text
    board = created.json()
    assert board["id"] and board["name"] == "Release health" and len(board["widgets"]) == 2
    assert board["widgets"][1]["query"]["aggregates"] == [{"fn": "p75", "metric": "lcp_ms"}]
    path = f"/api/dashboards/{board['id']}"
    assert client.get(path, headers=_auth(acme)).json() == board
    assert [r["id"] for r in client.get("/api/dashboards", headers=_auth(acme)).json()["rows"]] == [
        board["id"]
    ]
    assert client.get("/api/dashboards", headers=_auth(other)).json() == {"rows": []}
    for method in ("get", "delete"):
        assert getattr(client, method)(path, headers=_auth(other)).status_code == 404
    assert client.put(path, json=BODY, headers=_auth(other)).status_code == 404
    # What GET answers goes back in as it is (a file kept in git): the body part round-trips.
    exported = {k: board[k] for k in ("name", "description", "filters", "widgets")}
    copied = client.post("/api/dashboards", json=exported, headers=_auth(acme)).json()
    assert {k: copied[k] for k in exported} == exported
    replaced = client.put(path, json={**BODY, "name": "Vitals", "widgets": []}, headers=_auth(acme))
    assert (
        replaced.status_code == 200
        and replaced.json()["name"] == "Vitals"
        and replaced.json()["widgets"] == []
    )
    assert client.delete(path, headers=_auth(acme)).status_code == 204
    assert client.get(path, headers=_auth(acme)).status_code == 404
    assert client.get("/api/dashboards").status_code == 401


def test_bad_fields_are_named(client: TestClient, org_factory) -> None:
    acme = org_factory()
    cases = [
        (
            {**BODY, "widgets": [{"kind": "pie", "view": "performance.lcp"}]},
            "widgets[0].kind: unknown kind 'pie'",
        ),
        (
            {
                **BODY,
                "widgets": [
                    {"kind": "line", "query": {"dataset": "pageloads", "aggregates": [{"fn": "p75"}]}}
                ],
            },
            "widgets[0].query.aggregates[0].metric: p75 needs a metric of pageloads",
        ),
        ({**BODY, "filters": {"range": "1y"}}, "filters.range: '1y' is not one of"),
        ({**BODY, "filters": {"project": "nope"}}, "filters.project: no project 'nope' in this organization"),
    ]
    for body, detail in cases:
        response = client.post("/api/dashboards", json=body, headers=_auth(acme))
        assert response.status_code == 400 and response.json()["detail"].startswith(detail), response.text
    assert (
        client.post("/api/dashboards", content=b"{", headers=_auth(acme)).json()["detail"]
        == "body: must be JSON"
    )
    assert client.get("/api/dashboards/x1", headers=_auth(acme)).status_code == 400
