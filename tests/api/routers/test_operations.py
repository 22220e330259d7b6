"""`GET/PUT /api/projects/{slug}/retention` with the organization's key; the operator endpoints refuse
anything but the running server's local token."""

from __future__ import annotations


def test_a_projects_retention_through_the_api(app_client, org_factory) -> None:
    acme, other = org_factory("Acme"), org_factory("Other")
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    url = f"/api/projects/{acme['project']}/retention"
    assert app_client.get(url).status_code == 401
    assert app_client.get(url, headers=auth).json() == {
        "project": "web-app",
        "days": None,
        "installation_days": 90,
        "max_events_per_issue": None,
        "max_events_per_project": None,
    }
    changed = app_client.put(url, json={"days": 14}, headers=auth)
    assert changed.status_code == 200 and changed.json()["days"] == 14
    bad = app_client.put(url, json={"days": 365}, headers=auth)
    assert bad.status_code == 400 and "days: must be from 1 to 90" in bad.json()["detail"]
    assert app_client.put(url, json={"days": "soon"}, headers=auth).status_code in (400, 422)
    theirs = f"/api/projects/{other['project']}/retention"
    assert app_client.put(theirs, json={"days": 3}, headers=auth).status_code == 404
    assert app_client.put(url, json={"days": None}, headers=auth).json()["days"] is None
    capped = app_client.put(url, json={"days": 14, "max_events_per_issue": 500}, headers=auth).json()
    assert (capped["days"], capped["max_events_per_issue"], capped["max_events_per_project"]) == (
        14,
        500,
        None,
    )
    # A cap left out stays; null lifts it.
    kept = app_client.put(url, json={"days": 14, "max_events_per_project": 9000}, headers=auth).json()
    assert (kept["max_events_per_issue"], kept["max_events_per_project"]) == (500, 9000)
    lifted = app_client.put(url, json={"days": 14, "max_events_per_issue": None}, headers=auth).json()
    assert (lifted["max_events_per_issue"], lifted["max_events_per_project"]) == (None, 9000)
    refused = app_client.put(url, json={"days": 14, "max_events_per_issue": 0}, headers=auth)
    assert refused.status_code == 400
    assert (
        refused.json()["detail"] == "max_events_per_issue: must be from 1 to 100,000,000, or null for no cap"
    )
    assert app_client.get(url, headers=auth).json()["max_events_per_project"] == 9000


def test_operator_endpoints_need_the_servers_token(app_client, org_factory) -> None:
    acme = org_factory("Acme")
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    app_client.app.state.pipelines_token = "the-token"
    for method, path in (
        ("POST", "/api/operations/backup"),
        ("GET", "/api/operations/storage"),
        ("POST", "/api/operations/retention"),
    ):
        refused = app_client.request(method, path, headers=auth, json={"to": "/tmp/x"})
        assert refused.status_code == 401 and "pipelines_token" in refused.json()["detail"], path
    local = {"X-StackLens-Pipelines-Token": "the-token"}
    relative = app_client.post("/api/operations/backup", headers=local, json={"to": "relative/dir"})
    assert relative.status_code == 400 and relative.json()["detail"] == "to: must be an absolute path"
    storage = app_client.get("/api/operations/storage", headers=local)
    assert storage.status_code == 200 and storage.json()["projects"] == []
