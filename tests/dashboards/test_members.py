"""The members page: owners list, add (new or existing accounts) and remove people; the last owner stays;
members get 403; the new member can sign in and sees the organization as a member."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from tests.dashboards.conftest import add_member, csrf_of, sign_in


def _remove_path(html: str, email: str) -> str:
    row = re.search(rf"<td>{re.escape(email)}</td>.*?action=\"([^\"]+/remove)\"", html, re.S)
    assert row, f"{email} not listed with a remove button"
    return row.group(1)


def test_owner_adds_and_removes_members(client, org_factory, stores) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/members"
    page = client.get(path)
    assert page.status_code == 200 and org["email"] in page.text
    token = csrf_of(page.text)

    added = client.post(
        path,
        data={
            "email": "New.Person@Example.test",
            "password": "long-enough-1",
            "role": "member",
            "csrf_token": token,
        },
        follow_redirects=False,
    )
    assert added.status_code == 303
    listing = client.get(path).text
    assert "new.person@example.test" in listing and listing.count('class="member-row"') == 2

    for form, reason in (
        ({"email": "not-an-email", "password": "long-enough-1", "role": "member"}, "invalid e-mail"),
        ({"email": "short@example.test", "password": "short", "role": "member"}, "at least 8"),
        ({"email": "x@example.test", "password": "long-enough-1", "role": "admin"}, "role must be"),
    ):
        refused = client.post(path, data={**form, "csrf_token": token})
        assert refused.status_code == 400 and reason in refused.text
    assert client.post(path, data={"email": "y@example.test", "password": "long-enough-1"}).status_code == 400
    assert client.get(path).text.count('class="member-row"') == 2

    # The last owner can neither be removed nor demoted.
    own_remove = _remove_path(listing, org["email"])
    refused = client.post(own_remove, data={"csrf_token": token})
    assert refused.status_code == 400 and "last owner" in refused.text
    demote = client.post(
        path, data={"email": org["email"], "password": "", "role": "member", "csrf_token": token}
    )
    assert demote.status_code == 400 and "at least one owner" in demote.text

    # The new member signs in, sees the organization, but not this page.
    with TestClient(client.app) as other:
        sign_in(other, "new.person@example.test", "long-enough-1")
        assert other.get(f"/orgs/{org['org_slug']}").status_code == 200
        assert other.get(path).status_code == 403

    removed = client.post(
        _remove_path(listing, "new.person@example.test"), data={"csrf_token": token}, follow_redirects=False
    )
    assert removed.status_code == 303 and removed.headers["location"] == path
    assert "new.person@example.test" not in client.get(path).text
    with session_scope(stores) as session:
        actions = session.scalars(
            select(ActivityEntry.action).where(ActivityEntry.org_id == org["org_id"])
        ).all()
    assert actions.count("member.added") == 1 and actions.count("member.removed") == 1


def test_second_owner_makes_removal_possible_and_other_orgs_are_404(client, org_factory, stores) -> None:
    org, other = org_factory("Mine"), org_factory("Other")
    second = add_member(stores, org, "owner")
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/members"
    page = client.get(path).text
    token = csrf_of(page)
    # Removing a user id that is not a member of this organization (the other org's owner): refused.
    with session_scope(stores) as session:
        from stacklens.control.models import User

        their_id = session.scalar(select(User.id).where(User.email == other["email"]))
    refused = client.post(f"{path}/{their_id}/remove", data={"csrf_token": token})
    assert refused.status_code == 400 and "no member" in refused.text
    assert client.get(f"/orgs/{other['org_slug']}/settings/members").status_code == 404
    # With a second owner, the first may leave; they land outside the organization afterwards.
    left = client.post(_remove_path(page, org["email"]), data={"csrf_token": token}, follow_redirects=False)
    assert left.status_code == 303 and left.headers["location"] == "/"
    # Removal ended their sessions (this one too): signed in again, the organization is gone for them.
    assert client.get(path, follow_redirects=False).headers["location"].startswith("/login")
    sign_in(client, org["email"])
    assert client.get(path).status_code == 404
    sign_in(client, second)
    assert org["email"] not in client.get(path).text
