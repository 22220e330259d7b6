"""Comments on an issue through the JSON API: markdown rendered safely, mentions, edits and deletes of
one's own, and organization isolation."""

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


def test_comments(app_client, stores, org_factory) -> None:
    org, other, ids, _theirs, member, _stranger = _setup(stores, org_factory)
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    theirs_auth = {"Authorization": f"Bearer {other['api_key']}"}
    issue = ids[0]
    handle = member.split("@")[0]
    body = f"Seen by @{handle}: <script>alert(1)</script> [docs](https://example.test/x) [bad](javascript:alert(1))"
    made = app_client.post(f"/api/issues/{issue}/comments", headers=auth, json={"body": body})
    assert made.status_code == 201, made.text
    comment = made.json()
    assert comment["body"] == body and comment["mentions"] == [member]
    assert comment["author"].startswith("api:") and comment["edited_at"] is None
    html = comment["html"]
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<a href="https://example.test/x" rel="noopener noreferrer nofollow">docs</a>' in html
    assert 'href="javascript' not in html
    assert f'<span class="mention">@{handle}</span>' in html

    assert (
        app_client.post(f"/api/issues/{issue}/comments", headers=auth, json={"body": "  "}).status_code == 400
    )
    long = app_client.post(f"/api/issues/{issue}/comments", headers=auth, json={"body": "x" * 10_001})
    assert long.status_code == 400 and "10,000" in long.json()["detail"]

    edited = app_client.put(
        f"/api/issues/{issue}/comments/{comment['id']}", headers=auth, json={"body": "**fixed**"}
    )
    assert edited.status_code == 200 and edited.json()["html"] == "<p><strong>fixed</strong></p>\n"
    assert edited.json()["edited_at"] is not None
    listed = app_client.get(f"/api/issues/{issue}/comments", headers=auth).json()["comments"]
    assert [c["body"] for c in listed] == ["**fixed**"]

    # Another organization: the issue does not exist for it, whatever it tries.
    path = f"/api/issues/{issue}/comments"
    assert app_client.get(path, headers=theirs_auth).status_code == 404
    assert app_client.post(path, headers=theirs_auth, json={"body": "hi"}).status_code == 404
    assert (
        app_client.put(f"{path}/{comment['id']}", headers=theirs_auth, json={"body": "x"}).status_code == 404
    )
    assert app_client.delete(f"{path}/{comment['id']}", headers=theirs_auth).status_code == 404
    # A comment id of another issue is not found on this one.
    other_issue = ids[1]
    assert (
        app_client.delete(f"/api/issues/{other_issue}/comments/{comment['id']}", headers=auth).status_code
        == 404
    )

    assert app_client.delete(f"{path}/{comment['id']}", headers=auth).status_code == 204
    assert app_client.get(path, headers=auth).json()["comments"] == []
    assert app_client.delete(f"{path}/{comment['id']}", headers=auth).status_code == 404
