"""`GET/PUT /api/organization/settings`: who may publish share links, read and changed with the
organization's API key (issue #62); a bad value is a 400 that names the choices, another organization's
key changes only its own."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_share_links_by_is_read_and_changed_over_the_api(client: TestClient, org_factory) -> None:
    acme, other = org_factory("Acme"), org_factory("Other")
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    assert client.get("/api/organization/settings", headers=auth).json() == {"share_links_by": "owners"}
    bad = client.put("/api/organization/settings", json={"share_links_by": "everyone"}, headers=auth)
    assert bad.status_code == 400 and "one of owners, members" in bad.json()["detail"]
    changed = client.put("/api/organization/settings", json={"share_links_by": "members"}, headers=auth)
    assert changed.status_code == 200 and changed.json() == {"share_links_by": "members"}
    assert client.get("/api/organization/settings", headers=auth).json() == {"share_links_by": "members"}
    theirs = {"Authorization": f"Bearer {other['api_key']}"}
    assert client.get("/api/organization/settings", headers=theirs).json() == {"share_links_by": "owners"}
    assert client.get("/api/organization/settings").status_code == 401
