"""Report subscriptions over the real API app: created for a dashboard or saved query and a channel of the
organization, listed with their next run, replaced, deleted; to_me and another organization's channel
answer 400 naming the field; another organization's subscription answers 404."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _auth(org: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_crud_within_the_organization(client: TestClient, org_factory) -> None:
    acme, other = org_factory("Acme"), org_factory("Other")
    board = client.post("/api/dashboards", json={"name": "Vitals"}, headers=_auth(acme)).json()
    channel = client.post(
        "/api/alerts/channels",
        json={"type": "email", "name": "team", "to": ["t@acme.test"]},
        headers=_auth(acme),
    )
    assert channel.status_code == 201, channel.text
    body = {
        "target": {"dashboard_id": board["id"]},
        "schedule": {"every": "week", "at": "09:00", "weekday": "monday", "timezone": "Europe/Paris"},
        "format": "csv",
        "channel_id": channel.json()["id"],
    }
    created = client.post("/api/subscriptions", json=body, headers=_auth(acme))
    assert created.status_code == 201, created.text
    row = created.json()
    assert (
        row["schedule"] == body["schedule"] and row["next_run_at"].endswith(":00:00Z") and not row["paused"]
    )
    assert [r["id"] for r in client.get("/api/subscriptions", headers=_auth(acme)).json()["rows"]] == [
        row["id"]
    ]
    assert client.get("/api/subscriptions", headers=_auth(other)).json() == {"rows": []}
    path = f"/api/subscriptions/{row['id']}"
    assert client.put(path, json=body, headers=_auth(other)).status_code == 404
    paused = client.put(path, json={**body, "paused": True, "format": "summary"}, headers=_auth(acme)).json()
    assert paused["paused"] is True and paused["format"] == "summary"
    to_me = client.post(
        "/api/subscriptions", json={**body, "channel_id": None, "to_me": True}, headers=_auth(acme)
    )
    assert to_me.status_code == 400 and to_me.json()["detail"].startswith("to_me: needs a signed-in member")
    theirs = client.post(
        "/api/subscriptions", json={**body, "channel_id": channel.json()["id"]}, headers=_auth(other)
    )
    assert theirs.status_code == 400 and theirs.json()["detail"].startswith(
        "target.dashboard_id: no dashboard"
    )
    assert client.delete(path, headers=_auth(other)).status_code == 404
    assert client.delete(path, headers=_auth(acme)).status_code == 204
    assert client.delete(path, headers=_auth(acme)).status_code == 404
