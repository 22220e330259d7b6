"""Zero-downtime API-key rotation (spec order): the next key works beside the current one; regenerate
promotes it and the old value fails at once; one current and at most one next key; both steps logged.
Every answer showing a key says ``Cache-Control: no-store``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.settings import Settings


@pytest.fixture
def client(control_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(control_settings)) as test_client:
        yield test_client


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_next_key_rotation(client: TestClient, make_org) -> None:
    org = make_org()
    current = org["api_key"]
    issued = client.post("/api/keys/api/next", headers=bearer(current))
    assert issued.status_code == 201 and issued.headers["cache-control"] == "no-store"
    upcoming = issued.json()["api_key"]
    assert upcoming.startswith("stacklens_api_") and upcoming != current
    # Both authenticate while the shippers are moved over.
    for key in (current, upcoming):
        assert client.get("/api/auth/verify", headers=bearer(key)).status_code == 200
    shown = client.get("/api/keys/api", headers=bearer(current)).json()
    assert shown["masked"].endswith(current[-4:]) and shown["next_masked"].endswith(upcoming[-4:])
    again = client.post("/api/keys/api/next", headers=bearer(upcoming))
    assert again.status_code == 409 and "exists already" in again.json()["detail"]
    assert client.post("/api/keys/api/reveal", headers=bearer(current)).json()["api_key"] == current

    promoted = client.post("/api/keys/api/regenerate", headers=bearer(current))
    assert promoted.status_code == 200 and promoted.json()["api_key"] == upcoming
    refused = client.get("/api/auth/verify", headers=bearer(current))
    assert refused.status_code == 401 and refused.json()["error"] == "Invalid API Key"
    shown = client.get("/api/keys/api", headers=bearer(upcoming)).json()
    assert shown["masked"].endswith(upcoming[-4:]) and shown["next_masked"] is None
    # Without a next key, regenerate makes a fresh one, as before.
    fresh = client.post("/api/keys/api/regenerate", headers=bearer(upcoming)).json()["api_key"]
    assert fresh not in (current, upcoming)
    assert client.get("/api/auth/verify", headers=bearer(upcoming)).status_code == 401
    actions = [
        item["action"]
        for item in client.get("/api/activity", headers=bearer(fresh), params={"api_key_only": True}).json()[
            "items"
        ]
    ]
    assert actions.count("api_key.next_created") == 1 and actions.count("api_key.regenerated") == 2


def test_key_answers_are_not_cached(client: TestClient, make_org) -> None:
    org = make_org(project="Shop")
    key = bearer(org["api_key"])
    answers = [
        client.get("/api/keys/api", headers=key),
        client.post("/api/keys/api/reveal", headers=key),
        client.post(f"/api/projects/{org['project']}/app-keys/reveal", headers=key),
        client.post(f"/api/projects/{org['project']}/app-keys", headers=key, json={"service": "worker"}),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 201]
    assert all(a.headers["cache-control"] == "no-store" for a in answers)
    assert "server" not in {name.lower() for name in answers[0].headers}
