"""Annotations over the real API app: posted in Grafana's shape, listed by project and window, deleted;
another organization's answers 404 and never lists; a bad field answers 400 naming it."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _auth(org: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_post_list_and_delete(client: TestClient, org_factory) -> None:
    acme, other = org_factory("Acme"), org_factory("Other")
    body = {
        "time": "2026-11-20T12:00:00Z",
        "text": "deploy",
        "tags": ["deploy"],
        "project": acme["project"],
        "release": "shop@1.4.0",
    }
    created = client.post("/api/annotations", json=body, headers=_auth(acme))
    assert created.status_code == 201, created.text
    note = created.json()
    assert {k: note[k] for k in body} == body and note["id"]
    org_wide = client.post(
        "/api/annotations", json={"text": "flag", "time": 1763640000000}, headers=_auth(acme)
    ).json()
    assert org_wide["project"] == "" and org_wide["time"] == "2025-11-20T12:00:00Z"
    rows = client.get("/api/annotations", params={"project": acme["project"]}, headers=_auth(acme)).json()[
        "rows"
    ]
    assert [r["id"] for r in rows] == [note["id"], org_wide["id"]]
    window = {"since": "2026-11-19T00:00:00Z", "until": "2026-11-21T00:00:00Z"}
    assert [
        r["id"] for r in client.get("/api/annotations", params=window, headers=_auth(acme)).json()["rows"]
    ] == [note["id"]]
    assert client.get("/api/annotations", headers=_auth(other)).json() == {"rows": []}
    assert (
        client.get("/api/annotations", params={"project": acme["project"]}, headers=_auth(other)).status_code
        == 404
    )
    assert client.delete(f"/api/annotations/{note['id']}", headers=_auth(other)).status_code == 404
    assert client.delete(f"/api/annotations/{note['id']}", headers=_auth(acme)).status_code == 204
    assert client.delete(f"/api/annotations/{note['id']}", headers=_auth(acme)).status_code == 404
    assert client.delete("/api/annotations/x", headers=_auth(acme)).status_code == 400
    bad = client.post("/api/annotations", json={"text": "x", "time": "soon"}, headers=_auth(acme))
    assert bad.status_code == 400 and bad.json()["detail"].startswith("time: 'soon' is not an ISO 8601 time")
    assert client.get("/api/annotations", params={"range": "1y"}, headers=_auth(acme)).status_code == 400
    assert client.post("/api/annotations", json={"text": "x"}).status_code == 401
