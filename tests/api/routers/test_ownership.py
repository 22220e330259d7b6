"""`GET/PUT /api/projects/{slug}/ownership`: rules stored as written, refused lines named (nothing stored),
owners of this organization only, another organization's project not found."""

from __future__ import annotations

from stacklens.settings import Settings
from tests.dashboards.conftest import add_member


def test_ownership_rules(app_client, stores: Settings, org_factory) -> None:
    org, other = org_factory("Rules"), org_factory("Other")
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    path = f"/api/projects/{org['project']}/ownership"
    member = add_member(stores, org)
    stranger = add_member(stores, other)
    assert app_client.get(path, headers=auth).json() == {"rules": ""}
    assert app_client.post("/api/teams", headers=auth, json={"slug": "payments"}).status_code == 201
    rules = f"path:src/checkout/* #payments\nurl:*/search* {member}"
    saved = app_client.put(path, headers=auth, json={"rules": rules})
    assert saved.status_code == 200 and saved.json() == {"rules": rules}
    bad = app_client.put(path, headers=auth, json={"rules": "path:src/* #payments\nmodule:x"})
    assert bad.status_code == 400 and "line 2" in bad.json()["detail"]
    bad = app_client.put(path, headers=auth, json={"rules": f"path:src/* {stranger}"})
    assert bad.status_code == 400 and stranger in bad.json()["detail"]
    assert app_client.get(path, headers=auth).json() == {"rules": rules}  # nothing stored by the refused ones

    theirs = {"Authorization": f"Bearer {other['api_key']}"}
    assert app_client.get(path, headers=theirs).status_code == 404
    assert app_client.put(path, headers=theirs, json={"rules": ""}).status_code == 404
    # Their own project cannot name this organization's team.
    mine = app_client.put(
        f"/api/projects/{other['project']}/ownership", headers=theirs, json={"rules": "path:* #payments"}
    )
    assert mine.status_code == 400
