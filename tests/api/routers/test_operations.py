"""`GET/PUT /api/projects/{slug}/retention` with the organization's key; the operator endpoints refuse
anything but the running server's local token."""

from __future__ import annotations

from tests.dashboards.conftest import client  # noqa: F401 - shared fixtures


def test_a_projects_retention_through_the_api(client, org_factory) -> None:  # noqa: F811
    acme, other = org_factory("Acme"), org_factory("Other")
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    url = f"/api/projects/{acme['project']}/retention"
    assert client.get(url).status_code == 401
    assert client.get(url, headers=auth).json() == {
        "project": "web-app",
        "days": None,
        "installation_days": 90,
        "max_events_per_issue": None,
        "max_events_per_project": None,
    }
    changed = client.put(url, json={"days": 14}, headers=auth)
    assert changed.status_code == 200 and changed.json()["days"] == 14
    bad = client.put(url, json={"days": 365}, headers=auth)
    assert bad.status_code == 400 and "days: must be from 1 to 90" in bad.json()["detail"]
    assert client.put(url, json={"days": "soon"}, headers=auth).status_code in (400, 422)
    theirs = f"/api/projects/{other['project']}/retention"
    assert client.put(theirs, json={"days": 3}, headers=auth).status_code == 404
    assert client.put(url, json={"days": None}, headers=auth).json()["days"] is None
    capped = client.put(url, json={"days": 14, "max_events_per_issue": 500}, headers=auth).json()
    assert (capped["days"], capped["max_events_per_issue"], capped["max_events_per_project"]) == (
        14,
        500,
        None,
    )
    # A cap left out stays; null lifts it.
    kept = client.put(url, json={"days": 14, "max_events_per_project": 9000}, headers=auth).json()
    assert (kept["max_events_per_issue"], kept["max_events_per_project"]) == (500, 9000)
    lifted = client.put(url, json={"days": 14, "max_events_per_issue": None}, headers=auth).json()
    assert (lifted["max_events_per_issue"], lifted["max_events_per_project"]) == (None, 9000)
    refused = client.put(url, json={"days": 14, "max_events_per_issue": 0}, headers=auth)
    assert refused.status_code == 400
    assert (
        refused.json()["detail"] == "max_events_per_issue: must be from 1 to 100,000,000, or null for no cap"
    )
    assert client.get(url, headers=auth).json()["max_events_per_project"] == 9000


def test_operator_endpoints_need_the_servers_token(client, org_factory) -> None:  # noqa: F811
    acme = org_factory("Acme")
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    client.app.state.pipelines_token = "the-token"
    for method, path in (
        ("POST", "/api/operations/backup"),
        ("GET", "/api/operations/storage"),
        ("POST", "/api/operations/retention"),
    ):
        refused = client.request(method, path, headers=auth, json={"to": "/tmp/x"})
        assert refused.status_code == 401 and "pipelines_token" in refused.json()["detail"], path
    local = {"X-StackLens-Pipelines-Token": "the-token"}
    relative = client.post("/api/operations/backup", headers=local, json={"to": "relative/dir"})
    assert relative.status_code == 400 and relative.json()["detail"] == "to: must be an absolute path"
    storage = client.get("/api/operations/storage", headers=local)
    assert storage.status_code == 200 and storage.json()["projects"] == []
