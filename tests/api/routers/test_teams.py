"""Teams and assignees through the JSON API: teams and their members, `PUT /api/issues/{id}` with an assignee
(a member, `#team`, null), the list's `assigned:` filters, the activity log, and organization isolation."""

from __future__ import annotations

from stacklens.settings import Settings
from tests.dashboards.conftest import add_member
from tests.dashboards.landing import land, sdk_event


def _fail_a() -> None:
    raise KeyError("a")


def _fail_b() -> None:
    raise ValueError("b")


def _fail_c() -> None:
    raise TypeError("c")


def _setup(stores: Settings, org_factory):
    org, other = org_factory("Mine"), org_factory("Other")
    rows = land(org["org_id"], org["project_id"], [sdk_event(f) for f in (_fail_a, _fail_b, _fail_c)])
    theirs = land(other["org_id"], other["project_id"], [sdk_event(_fail_a)])
    member = add_member(stores, org)
    stranger = add_member(stores, other)
    ids = sorted({str(r["issue_id"]) for r in rows})
    return org, other, ids, str(theirs[0]["issue_id"]), member, stranger


def _ids(app_client, org, auth, query: str) -> set[str]:
    answer = app_client.get(
        f"/api/projects/{org['project']}/issues", headers=auth, params={"query": query, "status": "all"}
    )
    assert answer.status_code == 200, answer.text
    return {i["id"] for i in answer.json()["issues"]}


def test_assign_filter_and_history(app_client, stores, org_factory) -> None:
    org, other, ids, theirs, member, stranger = _setup(stores, org_factory)
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    assert (
        app_client.post("/api/teams", headers=auth, json={"slug": "payments", "name": "Payments"}).status_code
        == 201
    )
    assert app_client.post("/api/teams", headers=auth, json={"slug": "payments"}).status_code == 409
    assert app_client.post("/api/teams", headers=auth, json={"slug": "Bad Slug!"}).status_code == 400
    put = app_client.put("/api/teams/payments/members", headers=auth, json={"members": [member.upper()]})
    assert put.status_code == 200 and put.json()["members"] == [member]
    # Someone of another organization is not a member here.
    refused = app_client.put("/api/teams/payments/members", headers=auth, json={"members": [stranger]})
    assert refused.status_code == 404 and stranger in refused.json()["detail"]
    assert app_client.get("/api/teams", headers=auth).json()["teams"] == [
        {"slug": "payments", "name": "Payments", "members": [member]}
    ]

    first, second, third = ids
    answer = app_client.put(f"/api/issues/{first}", headers=auth, json={"assignee": member})
    assert answer.status_code == 200 and answer.json()["assignee"] == member
    assert answer.json()["status"] == "unresolved"
    both = app_client.put(
        f"/api/issues/{second}", headers=auth, json={"assignee": "#payments", "status": "resolved"}
    )
    assert (
        both.status_code == 200
        and both.json()["assignee"] == "#payments"
        and both.json()["status"] == "resolved"
    )
    assert app_client.get(f"/api/issues/{third}", headers=auth).json()["assignee"] is None

    assert _ids(app_client, org, auth, "unassigned") == {third}
    assert _ids(app_client, org, auth, "is:unassigned") == {third}
    assert _ids(app_client, org, auth, f"assigned:{member}") == {first}
    assert _ids(app_client, org, auth, "assigned:#payments") == {second}
    assert _ids(app_client, org, auth, "assigned:#nobody-here") == set()
    bad = app_client.get(
        f"/api/projects/{org['project']}/issues", headers=auth, params={"query": "assigned:me"}
    )
    assert bad.status_code == 400 and "API key" in bad.json()["detail"]
    bad = app_client.get(
        f"/api/projects/{org['project']}/issues", headers=auth, params={"query": "assigned:x"}
    )
    assert bad.status_code == 400 and "assigned:" in bad.json()["detail"]

    # Errors name what is wrong and change nothing.
    assert (
        app_client.put(f"/api/issues/{third}", headers=auth, json={"assignee": "nobody"}).status_code == 400
    )
    assert (
        app_client.put(f"/api/issues/{third}", headers=auth, json={"assignee": stranger}).status_code == 404
    )
    assert app_client.put(f"/api/issues/{third}", headers=auth, json={"assignee": "#nope"}).status_code == 404
    assert app_client.put(f"/api/issues/{third}", headers=auth, json={}).status_code == 400
    # An illegal status change keeps the assignment of the same request out too.
    clash = app_client.put(
        f"/api/issues/{second}", headers=auth, json={"assignee": member, "status": "resolved"}
    )
    assert clash.status_code == 409
    assert app_client.get(f"/api/issues/{second}", headers=auth).json()["assignee"] == "#payments"

    unassigned = app_client.put(f"/api/issues/{first}", headers=auth, json={"assignee": None})
    assert unassigned.status_code == 200 and unassigned.json()["assignee"] is None
    assert _ids(app_client, org, auth, "unassigned") == {first, third}

    # Another organization's key sees none of it and cannot assign here.
    theirs_auth = {"Authorization": f"Bearer {other['api_key']}"}
    assert (
        app_client.put(f"/api/issues/{first}", headers=theirs_auth, json={"assignee": stranger}).status_code
        == 404
    )
    assert app_client.get("/api/teams", headers=theirs_auth).json()["teams"] == []
    assert (
        app_client.put("/api/teams/payments/members", headers=theirs_auth, json={"members": []}).status_code
        == 404
    )
    assert app_client.put(f"/api/issues/{theirs}", headers=auth, json={"assignee": member}).status_code == 404

    # The activity log has each assignment, unassignment and status change.
    log = app_client.get("/api/activity", headers=auth, params={"limit": 50}).json()
    summaries = [r["summary"] for r in log["items"]]
    assert f"Assigned issue {first} to {member}." in summaries
    assert f"Assigned issue {second} to #payments." in summaries
    assert f"Set issue {second} to resolved." in summaries
    assert f"Unassigned issue {first} (it was assigned to {member})." in summaries
