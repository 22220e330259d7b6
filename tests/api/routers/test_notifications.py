"""`GET/PUT /api/me/notifications`: "me" is the member who created the API key; modes per project and kind,
bad kinds and modes named, another organization's project not found."""

from __future__ import annotations


def test_my_notification_settings(app_client, org_factory) -> None:
    org, other = org_factory("Mine", "Shop"), org_factory("Other", "Elsewhere")
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    path = "/api/me/notifications"
    defaults = {
        "assigned": "immediate",
        "mentions": "immediate",
        "comments": "immediate",
        "regressions": "immediate",
        "weekly": "none",
        "feedback": "none",
    }
    assert app_client.get(path, headers=auth).json() == {"projects": {org["project"]: defaults}}
    changed = app_client.put(
        path, headers=auth, json={"projects": {org["project"]: {"comments": "daily", "assigned": "none"}}}
    )
    assert changed.status_code == 200
    assert changed.json()["projects"][org["project"]] == {**defaults, "assigned": "none", "comments": "daily"}
    assert app_client.get(path, headers=auth).json() == changed.json()
    bad = app_client.put(path, headers=auth, json={"projects": {org["project"]: {"comments": "hourly"}}})
    assert bad.status_code == 400 and "comments" in bad.text
    bad = app_client.put(path, headers=auth, json={"projects": {org["project"]: {"monthly": "daily"}}})
    assert bad.status_code == 400 and "kind must be one of" in bad.json()["detail"]
    bad = app_client.put(path, headers=auth, json={"projects": {org["project"]: {"weekly": "daily"}}})
    assert bad.status_code == 400 and "weekly: mode must be one of none, weekly" in bad.json()["detail"]
    weekly = app_client.put(path, headers=auth, json={"projects": {org["project"]: {"weekly": "weekly"}}})
    assert weekly.json()["projects"][org["project"]]["weekly"] == "weekly"
    missing = app_client.put(path, headers=auth, json={"projects": {other["project"]: {"comments": "none"}}})
    assert missing.status_code == 404
    # The other organization's key speaks for its own owner, who sees only their own projects.
    theirs = app_client.get(path, headers={"Authorization": f"Bearer {other['api_key']}"}).json()
    assert theirs == {"projects": {other["project"]: defaults}}
