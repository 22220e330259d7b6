"""Dashboard variables, refresh and the new kinds over the real API app (the dashboard fields of
docs/dashboards.md word for word): ``"variables": [{"name", "column" | "values", "default"}]``, ``"refresh"``
one of null, 30s, 1m, 5m, 15m, kinds area, stacked_bar, scatter, heatmap and gauge; each kept and answered
back, a bad one a 400 naming its field."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

LOADS = {"dataset": "pageloads", "aggregates": [{"fn": "count"}], "interval": "1d"}
BODY: dict[str, Any] = {
    "name": "Pages",
    "variables": [
        {"name": "page", "column": "page", "default": "/"},
        {"name": "env", "values": ["production"]},
    ],
    "refresh": "30s",
    "widgets": [
        {
            "title": kind,
            "kind": kind,
            "query": {**LOADS, "filters": [{"field": "page", "op": "=", "value": "$page"}]},
        }
        for kind in ("area", "stacked_bar", "scatter", "heatmap", "gauge")
    ],
}


def _auth(org: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_variables_refresh_and_kinds_are_kept_and_bad_ones_named(client: TestClient, org_factory) -> None:
    acme = org_factory()
    created = client.post("/api/dashboards", json=BODY, headers=_auth(acme))
    assert created.status_code == 201, created.text
    board = created.json()
    assert board["refresh"] == "30s"
    assert board["variables"] == [
        {"name": "page", "column": "page", "default": "/"},
        {"name": "env", "values": ["production"], "default": ""},
    ]
    assert [w["kind"] for w in board["widgets"]] == ["area", "stacked_bar", "scatter", "heatmap", "gauge"]
    assert client.get(f"/api/dashboards/{board['id']}", headers=_auth(acme)).json() == board
    replaced = client.put(
        f"/api/dashboards/{board['id']}", json={**BODY, "refresh": None}, headers=_auth(acme)
    )
    assert replaced.status_code == 200 and replaced.json()["refresh"] is None
    cases: list[tuple[dict[str, Any], str]] = [
        ({"refresh": "2m"}, "refresh: '2m' is not one of 30s, 1m, 5m, 15m"),
        (
            {"variables": [{"name": "page", "column": "colour"}]},
            "variables[0].column: unknown column 'colour'",
        ),
        ({"variables": [{"name": "page"}]}, "variables[0]: give exactly one of column, values"),
        ({"variables": []}, "widgets[0].query.filters: no variable $page on this dashboard"),
    ]
    for change, detail in cases:
        response = client.post("/api/dashboards", json={**BODY, **change}, headers=_auth(acme))
        assert response.status_code == 400 and response.json()["detail"].startswith(detail), response.text
