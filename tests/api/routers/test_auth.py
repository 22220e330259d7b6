from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import regenerate_api_key
from stacklens.settings import Settings


@pytest.fixture
def client(control_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(control_settings)) as test_client:
        yield test_client


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_verify_returns_organization_and_iso_utc_time(client: TestClient, make_org) -> None:
    org = make_org("Acme Corp")
    response = client.get("/api/auth/verify", headers=bearer(org["api_key"]))
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True and body["organization"] == "Acme Corp"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["created_at"])
    assert (
        client.get("/api/auth/verify", headers={"Authorization": f"bearer {org['api_key']}"}).status_code
        == 200
    )


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        ({}, "Authorization: Bearer"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "must be `Bearer"),
        ({"Authorization": "Bearer"}, "must be `Bearer"),
        ({"Authorization": "Bearer stacklens_api_" + "A" * 32}, "unknown or has been regenerated"),
        ({"Authorization": "Bearer nonsense"}, "unknown or has been regenerated"),
    ],
)
def test_missing_or_unknown_key_is_invalid(client: TestClient, make_org, headers, detail) -> None:
    make_org()
    response = client.get("/api/auth/verify", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == "Invalid API Key"
    assert detail in response.json()["detail"]


@pytest.mark.parametrize("template", ["Bearer {key} ", "Bearer {key}\t", "Bearer  {key}"])
def test_whitespace_in_the_key_is_invalid(client: TestClient, make_org, template: str) -> None:
    org = make_org()
    value = template.format(key=org["api_key"])
    response = client.get("/api/auth/verify", headers={"Authorization": value})
    assert response.status_code == 401 and response.json()["error"] == "Invalid API Key"


def test_app_key_used_as_api_key_is_invalid(client: TestClient, make_org) -> None:
    org = make_org()
    response = client.get("/api/auth/verify", headers=bearer(org["app_key"]))
    assert response.status_code == 401
    assert response.json() == {
        "error": "Invalid API Key",
        "detail": "this is an app key, which identifies a project; authenticate with the API key",
    }


def test_regenerated_key_is_invalid(client: TestClient, make_org, control_settings: Settings) -> None:
    org = make_org()
    assert client.get("/api/auth/verify", headers=bearer(org["api_key"])).status_code == 200
    with session_scope(control_settings) as session:
        new = regenerate_api_key(session, org["org_id"])
    old = client.get("/api/auth/verify", headers=bearer(org["api_key"]))
    assert old.status_code == 401 and old.json()["error"] == "Invalid API Key"
    assert client.get("/api/auth/verify", headers=bearer(new)).status_code == 200


def test_request_rate_per_key_is_limited(client: TestClient, make_org, control_settings: Settings) -> None:
    org = make_org()
    with session_scope(control_settings) as session:
        accounts.set_quota(session, org["org_id"], requests_per_second=3)
    statuses = [client.get("/api/auth/verify", headers=bearer(org["api_key"])) for _ in range(6)]
    limited = [r for r in statuses if r.status_code == 429]
    assert limited, [r.status_code for r in statuses]
    assert limited[0].json()["error"] == "Rate Limited"
    assert int(limited[0].headers["Retry-After"]) >= 1
    other = make_org("Other")  # another organization's key has its own bucket
    assert client.get("/api/auth/verify", headers=bearer(other["api_key"])).status_code == 200


def test_use_is_recorded_with_ip_and_user_agent(client: TestClient, make_org) -> None:
    org = make_org()
    for _ in range(2):
        client.get(
            "/api/auth/verify", headers={**bearer(org["api_key"]), "User-Agent": "stacklens-shipper/1.0"}
        )
    items = client.get("/api/activity?api_key_only=true", headers=bearer(org["api_key"])).json()["items"]
    used = next(i for i in items if i["action"] == "api_key.used")
    assert used["detail"]["requests"] == 3  # two verifies and the activity request itself
    assert used["detail"]["last_ip"] == "testclient"
    assert used["detail"]["last_user_agent"].startswith("testclient") or used["detail"]["last_user_agent"]


def test_openapi_documents_the_endpoints(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for path in (
        "/api/auth/verify",
        "/api/projects",
        "/api/health",
        "/api/keys/api/regenerate",
        "/api/activity",
        "/api/limits",
    ):
        assert path in spec["paths"], path
    verify = spec["paths"]["/api/auth/verify"]["get"]["responses"]
    assert {"200", "401", "429"} <= set(verify)
    assert client.get("/docs").status_code == 200
