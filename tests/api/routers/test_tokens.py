"""`/api/tokens`: the API key creates a token for a named member (answered once), lists and revokes them;
a signed-in member for themself; bad fields named (400), other organizations' members and tokens 404,
nobody at all 401."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from stacklens.cli.app import build_app
from stacklens.settings import Settings
from tests.dashboards.conftest import csrf_of


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(build_app(settings)) as test_client:
        yield test_client


def test_api_key_creates_lists_and_revokes_for_a_member(client: TestClient, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    key = {"Authorization": f"Bearer {acme['api_key']}"}
    body = {"name": "ci agent", "scopes": ["read", "write"], "expires_in_days": 7, "member": acme["email"]}
    created = client.post("/api/tokens", headers=key, json=body)
    assert created.status_code == 201, created.text
    answer = created.json()
    assert set(answer) == {"id", "token", "scopes", "expires_at"} and answer["scopes"] == ["read", "write"]
    listed = client.get(f"/api/tokens?member={acme['email']}", headers=key).json()["tokens"]
    assert [t["id"] for t in listed] == [answer["id"]] and answer["token"] not in str(listed)
    assert client.get("/api/tokens", headers=key).status_code == 400
    for field, change in (
        ("scopes", {"scopes": ["root"]}),
        ("expires_in_days", {"expires_in_days": 0}),
        ("name", {"name": ""}),
    ):
        refused = client.post("/api/tokens", headers=key, json={**body, **change})
        assert refused.status_code == 400 and field in refused.json()["detail"], refused.text
    assert client.post("/api/tokens", headers=key, json={**body, "member": other["email"]}).status_code == 404
    other_key = {"Authorization": f"Bearer {other['api_key']}"}
    assert client.delete(f"/api/tokens/{answer['id']}", headers=other_key).status_code == 404
    assert client.delete(f"/api/tokens/{answer['id']}", headers=key).status_code == 204
    assert client.get(f"/api/tokens?member={acme['email']}", headers=key).json()["tokens"] == []
    assert client.post("/api/tokens", json=body).status_code == 401


def test_a_signed_in_member_creates_their_own(client: TestClient, make_org) -> None:
    acme = make_org("Acme")
    form = client.get("/login")
    signed = client.post(
        "/login",
        data={
            "email": acme["email"],
            "password": "password-123",
            "next": "/",
            "csrf_token": csrf_of(form.text),
        },
    )
    assert signed.status_code in (200, 303)
    created = client.post("/api/tokens", json={"name": "mine", "scopes": ["read"], "expires_in_days": None})
    assert created.status_code == 201, created.text
    assert created.json()["expires_at"] is None
    assert [t["name"] for t in client.get("/api/tokens").json()["tokens"]] == ["mine"]
