from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.control.auth import resolve_app_key
from stacklens.control.db import session_scope
from stacklens.settings import Settings


@pytest.fixture
def client(control_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(control_settings)) as test_client:
        yield test_client


def auth(org: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_api_key_view_reveal_and_regenerate(client: TestClient, make_org) -> None:
    org = make_org()
    shown = client.get("/api/keys/api", headers=auth(org)).json()
    assert shown["masked"] == f"stacklens_api_…{org['api_key'][-4:]}" and org["api_key"] not in str(shown)
    assert client.post("/api/keys/api/reveal", headers=auth(org)).json()["api_key"] == org["api_key"]
    regenerated = client.post("/api/keys/api/regenerate", headers=auth(org))
    assert regenerated.status_code == 200
    new = regenerated.json()["api_key"]
    assert new != org["api_key"] and new.startswith("stacklens_api_")
    refused = client.get("/api/auth/verify", headers=auth(org))
    assert refused.status_code == 401 and refused.json()["error"] == "Invalid API Key"
    items = client.get(
        "/api/activity", headers={"Authorization": f"Bearer {new}"}, params={"api_key_only": True}
    )
    actions = [i["action"] for i in items.json()["items"]]
    assert {"api_key.created", "api_key.viewed", "api_key.regenerated", "api_key.used"} <= set(actions)


def test_app_key_create_regenerate_reveal_revoke(
    client: TestClient, make_org, control_settings: Settings
) -> None:
    org = make_org(project="Shop")
    created = client.post(
        f"/api/projects/{org['project']}/app-keys", headers=auth(org), json={"service": "worker"}
    )
    assert created.status_code == 201
    worker = created.json()
    assert worker["service"] == "worker" and worker["app_key"].startswith("stacklens_app_worker_")
    duplicate = client.post(
        f"/api/projects/{org['project']}/app-keys", headers=auth(org), json={"service": "worker"}
    )
    assert duplicate.status_code == 400 and "already has" in duplicate.json()["detail"]
    bad = client.post(
        f"/api/projects/{org['project']}/app-keys", headers=auth(org), json={"service": "No_Good"}
    )
    assert bad.status_code == 400 and "invalid service name" in bad.json()["detail"]
    missing = client.post(f"/api/projects/{org['project']}/app-keys", headers=auth(org), json={})
    assert missing.status_code == 400

    again = client.post(
        f"/api/projects/{org['project']}/app-keys/regenerate", headers=auth(org), params={"service": "worker"}
    )
    assert again.status_code == 200 and again.json()["app_key"] != worker["app_key"]
    primary = client.post(f"/api/projects/{org['project']}/app-keys/regenerate", headers=auth(org)).json()
    assert primary["service"] is None and primary["app_key"] != org["app_key"]
    revealed = client.post(f"/api/projects/{org['project']}/app-keys/reveal", headers=auth(org)).json()
    assert revealed["app_key"] == primary["app_key"]
    with session_scope(control_settings) as session:
        assert resolve_app_key(session, org["org_id"], org["app_key"]) is None
        assert resolve_app_key(session, org["org_id"], worker["app_key"]) is None
        assert resolve_app_key(session, org["org_id"], again.json()["app_key"]).service == "worker"

    deleted = client.delete(
        f"/api/projects/{org['project']}/app-keys/{again.json()['id']}", headers=auth(org)
    )
    assert deleted.status_code == 204
    assert (
        client.delete(
            f"/api/projects/{org['project']}/app-keys/{again.json()['id']}", headers=auth(org)
        ).status_code
        == 404
    )
    with session_scope(control_settings) as session:
        assert resolve_app_key(session, org["org_id"], again.json()["app_key"]) is None


def test_another_organizations_project_is_not_found(client: TestClient, make_org) -> None:
    mine, theirs = make_org("Mine", project="mine"), make_org("Theirs", project="theirs")
    calls = [
        ("post", f"/api/projects/{theirs['project']}/app-keys", {"json": {"service": "worker"}}),
        ("post", f"/api/projects/{theirs['project']}/app-keys/regenerate", {}),
        ("post", f"/api/projects/{theirs['project']}/app-keys/reveal", {}),
        ("delete", f"/api/projects/{theirs['project']}/app-keys/1", {}),
        ("post", "/api/projects/no-such-project/app-keys/reveal", {}),
    ]
    bodies = []
    for method, path, extra in calls:
        response = getattr(client, method)(path, headers=auth(mine), **extra)
        assert response.status_code == 404, path
        bodies.append(response.json()["error"])
    assert set(bodies) == {"Not Found"}
    # Their primary key id exists, but under my project it is not found either.
    theirs_key_id = client.get("/api/projects", headers=auth(theirs)).json()["projects"][0]["app_keys"][0][
        "id"
    ]
    response = client.delete(f"/api/projects/{mine['project']}/app-keys/{theirs_key_id}", headers=auth(mine))
    assert response.status_code == 404
    assert (
        client.post(f"/api/projects/{theirs['project']}/app-keys/reveal", headers=auth(theirs)).json()[
            "app_key"
        ]
        == theirs["app_key"]
    )


def test_key_endpoints_need_the_api_key(client: TestClient, make_org) -> None:
    org = make_org()
    for method, path in (
        ("get", "/api/keys/api"),
        ("post", "/api/keys/api/regenerate"),
        ("post", "/api/keys/api/reveal"),
    ):
        response = getattr(client, method)(path, headers={"Authorization": f"Bearer {org['app_key']}"})
        assert response.status_code == 401 and response.json()["error"] == "Invalid API Key"
