"""The issues JSON API: Bearer API key, organization scope, filters, cursor pages, events, status changes."""

from __future__ import annotations

from tests.dashboards.landing import land, sdk_event


def _fail_a() -> None:
    raise KeyError("a")


def _fail_b() -> None:
    raise ValueError("b")


def _fail_c() -> None:
    raise TypeError("c")


FAILURES = (_fail_a, _fail_b, _fail_c)


def _setup(org_factory):
    org, other = org_factory("Mine"), org_factory("Other")
    rows = land(
        org["org_id"],
        org["project_id"],
        [sdk_event(FAILURES[n % 3], tags={"tenant": f"t{n % 2}"}) for n in range(6)],
    )
    theirs = land(other["org_id"], other["project_id"], [sdk_event(_fail_a)])
    return org, other, rows, theirs


def test_list_filters_cursor_and_scope(app_client, org_factory) -> None:
    org, other, _rows, _ = _setup(org_factory)
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    assert app_client.get(f"/api/projects/{org['project']}/issues").status_code == 401
    page = app_client.get(
        f"/api/projects/{org['project']}/issues", headers=auth, params={"limit": 2, "sort": "events"}
    )
    assert page.status_code == 200
    body = page.json()
    assert len(body["issues"]) == 2 and body["next_cursor"]
    rest = app_client.get(
        f"/api/projects/{org['project']}/issues",
        headers=auth,
        params={"limit": 2, "sort": "events", "cursor": body["next_cursor"]},
    ).json()
    ids = [i["id"] for i in body["issues"] + rest["issues"]]
    assert len(ids) == len(set(ids)) == 3 and rest["next_cursor"] is None
    assert (
        app_client.get(
            f"/api/projects/{org['project']}/issues", headers=auth, params={"cursor": "junk!"}
        ).status_code
        == 400
    )
    assert app_client.get(f"/api/projects/{other['project']}/issues", headers=auth).status_code == 404
    tagged = app_client.get(
        f"/api/projects/{org['project']}/issues", headers=auth, params={"query": "tenant:t1"}
    ).json()
    assert 0 < len(tagged["issues"]) <= 3


def test_issue_events_event_and_status(app_client, org_factory) -> None:
    org, _, rows, theirs = _setup(org_factory)
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    issue_id = str(rows[0]["issue_id"])
    issue = app_client.get(f"/api/issues/{issue_id}", headers=auth).json()
    assert issue["status"] == "unresolved" and issue["events"] == 2
    events = app_client.get(f"/api/issues/{issue_id}/events", headers=auth, params={"limit": 1}).json()
    assert len(events["events"]) == 1 and events["next_cursor"]
    event = app_client.get(f"/api/events/{events['events'][0]['event_id']}", headers=auth).json()
    assert event["issue_id"] == issue_id and event["payload"]["exception"]
    assert app_client.get(f"/api/issues/{theirs[0]['issue_id']}", headers=auth).status_code == 404
    assert app_client.get(f"/api/events/{theirs[0]['event_id']}", headers=auth).status_code == 404
    changed = app_client.put(f"/api/issues/{issue_id}", headers=auth, json={"status": "resolved"})
    assert changed.status_code == 200 and changed.json()["status"] == "resolved"
    again = app_client.put(f"/api/issues/{issue_id}", headers=auth, json={"status": "resolved"})
    assert again.status_code == 409
    assert (
        app_client.put(f"/api/issues/{issue_id}", headers=auth, json={"status": "bogus"}).status_code == 400
    )
