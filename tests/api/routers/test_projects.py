from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key
from stacklens.control.projects import create_project
from stacklens.settings import Settings


@pytest.fixture
def client(control_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(control_settings)) as test_client:
        yield test_client


def test_projects_list_with_masked_app_keys(client: TestClient, make_org, control_settings: Settings) -> None:
    org = make_org("Acme", project="Checkout")
    with session_scope(control_settings) as session:
        worker = create_app_key(session, org["project_id"], "worker")
    response = client.get("/api/projects", headers={"Authorization": f"Bearer {org['api_key']}"})
    assert response.status_code == 200
    body = response.json()
    assert body["next_cursor"] is None
    (project,) = body["projects"]
    assert {k: project[k] for k in ("id", "name", "slug", "platform")} == {
        "id": org["project_id"],
        "name": "Checkout",
        "slug": "checkout",
        "platform": "python",
    }
    assert project["created_at"].endswith("Z")
    assert [(k["service"], k["primary"]) for k in project["app_keys"]] == [(None, True), ("worker", False)]
    assert project["app_keys"][1]["masked"] == f"stacklens_app_worker_…{worker[-4:]}"
    # Each key's DSN carries the key itself: app keys are public identifiers (a browser DSN is in every page).
    # Its address is the service's own (the settings' host and port here), never the request's Host header.
    forged = client.get(
        "/api/projects", headers={"Authorization": f"Bearer {org['api_key']}", "Host": "evil.example"}
    ).json()
    assert forged == body
    assert project["app_keys"][0]["dsn"] == f"http://{org['app_key']}@127.0.0.1:8000/{project['id']}"
    assert project["app_keys"][1]["dsn"] == f"http://{worker}@127.0.0.1:8000/{project['id']}"


def test_cursor_pagination_and_isolation(client: TestClient, make_org, control_settings: Settings) -> None:
    mine = make_org("Mine", project="p0")
    theirs = make_org("Theirs", project="secret-project")
    with session_scope(control_settings) as session:
        for n in range(1, 5):
            create_project(session, mine["org_id"], f"p{n}")
    headers = {"Authorization": f"Bearer {mine['api_key']}"}
    slugs, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/projects", headers=headers, params=params).json()
        slugs += [p["slug"] for p in page["projects"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert slugs == ["p0", "p1", "p2", "p3", "p4"]
    other = client.get("/api/projects", headers={"Authorization": f"Bearer {theirs['api_key']}"}).json()
    assert [p["slug"] for p in other["projects"]] == ["secret-project"]


@pytest.mark.parametrize("params", [{"cursor": "garbage!"}, {"limit": 0}, {"limit": 1000}, {"limit": "x"}])
def test_bad_query_is_400(client: TestClient, make_org, params) -> None:
    org = make_org()
    response = client.get(
        "/api/projects", headers={"Authorization": f"Bearer {org['api_key']}"}, params=params
    )
    assert response.status_code == 400 and response.json()["error"] == "Bad Request"


def test_projects_need_a_key(client: TestClient) -> None:
    response = client.get("/api/projects")
    assert response.status_code == 401 and response.json()["error"] == "Invalid API Key"
