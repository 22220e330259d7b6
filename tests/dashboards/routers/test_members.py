"""The members page: owners invite people (a link the person accepts), withdraw invitations, change roles and
remove people behind a confirmation page; the last owner stays (neither removed nor demoted); members get
403; the answer never says who has an account."""

from __future__ import annotations

import re
import threading
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from tests.dashboards.conftest import add_member, csrf_of, sign_in


def _remove_path(html: str, email: str) -> str:
    row = re.search(rf"<td>{re.escape(email)}</td>.*?href=\"([^\"]+/remove)\"", html, re.S)
    assert row, f"{email} not listed with a remove link"
    return row.group(1)


def _invite(client: TestClient, path: str, token: str, email: str, **extra: str):
    return client.post(f"{path}/invitations", data={"email": email, "csrf_token": token, **extra})


def _link(html: str) -> str:
    match = re.search(r'id="invite-link" value="https?://[^/"]+(/invitations/[^"]+)"', html)
    assert match, "no invitation link on the page"
    return match.group(1)


def test_owner_invites_and_the_person_creates_their_account(client, org_factory, stores) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/members"
    page = client.get(path)
    assert page.status_code == 200 and org["email"] in page.text
    token = csrf_of(page.text)

    created = _invite(client, path, token, "New.Person@Example.test")
    assert created.status_code == 201 and created.headers["cache-control"] == "no-store"
    link = _link(created.text)
    # Nobody joined yet: the invitation waits, with the default role "member".
    listing = client.get(path).text
    assert listing.count('class="member-row"') == 1 and listing.count('class="invitation-row"') == 1
    assert re.search(r"<td>new.person@example.test</td><td>member</td>", listing)

    for form, reason in (
        ({"email": "not-an-email"}, "invalid e-mail"),
        ({"email": "x@example.test", "role": "superuser"}, "role must be"),
    ):
        refused = _invite(client, path, token, **form)
        assert refused.status_code == 400 and reason in refused.text
    assert client.post(f"{path}/invitations", data={"email": "y@example.test"}).status_code == 400  # no CSRF

    with TestClient(client.app) as invited:
        page = invited.get(link)
        assert page.status_code == 200 and "new.person@example.test" in page.text
        form_token = csrf_of(page.text)
        weak = invited.post(
            f"{link}/account", data={"password": "password", "confirm": "password", "csrf_token": form_token}
        )
        assert weak.status_code == 400 and "most common" in weak.text
        joined = invited.post(
            f"{link}/account",
            data={"password": "long-enough-1", "confirm": "long-enough-1", "csrf_token": form_token},
            follow_redirects=False,
        )
        assert joined.status_code == 303 and joined.headers["location"] == f"/orgs/{org['org_slug']}"
        assert invited.get(f"/orgs/{org['org_slug']}").status_code == 200
        assert invited.get(path).status_code == 403  # a member, not an owner
        used = invited.get(link)
        assert used.status_code == 410 and "used already" in used.text
    assert invited.get("/invitations/forged.token").status_code == 404

    listing = client.get(path).text
    assert listing.count('class="member-row"') == 2 and 'class="invitation-row"' not in listing
    own_remove = _remove_path(listing, org["email"])
    # The only owner: the confirmation page says why removal is impossible and offers no form.
    asked = client.get(own_remove)
    assert (
        asked.status_code == 200 and "is the only owner" in asked.text and 'name="confirm"' not in asked.text
    )
    refused = client.post(own_remove, data={"confirm": "yes", "csrf_token": token})
    assert refused.status_code == 400 and "last owner" in refused.text
    # Removing someone asks first: the page names the consequence, and without the tick nothing happens.
    person = _remove_path(listing, "new.person@example.test")
    asked = client.get(person)
    assert asked.status_code == 200 and "loses access to" in asked.text
    assert re.search(r'<input type="checkbox" name="confirm" value="yes" required', asked.text)
    unticked = client.post(person, data={"csrf_token": token})
    assert unticked.status_code == 400 and "Tick the box" in unticked.text
    assert client.get(path).text.count('class="member-row"') == 2
    removed = client.post(person, data={"confirm": "yes", "csrf_token": token}, follow_redirects=False)
    assert removed.status_code == 303 and removed.headers["location"] == path
    with session_scope(stores) as session:
        actions = session.scalars(
            select(ActivityEntry.action).where(ActivityEntry.org_id == org["org_id"])
        ).all()
    assert actions.count("invitation.created") == 1 and actions.count("member.added") == 1
    assert actions.count("member.removed") == 1


def test_invitation_answer_is_the_same_for_known_and_unknown_emails(client, org_factory) -> None:
    org, other = org_factory("Mine"), org_factory("Other")
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/members"
    token = csrf_of(client.get(path).text)
    known = _invite(client, path, token, other["email"])
    unknown = _invite(client, path, token, "nobody-here@example.test")
    assert known.status_code == unknown.status_code == 201

    def notice(html: str, email: str) -> str:
        section = re.search(r'<section class="card notice" id="invitation-created">.*?</section>', html, re.S)
        assert section, "no invitation notice"
        text = re.sub(r"/invitations/[^\"]+", "/invitations/T", section.group(0)).replace(email, "EMAIL")
        # The expiry is 7 days from each invitation's own second: a second's edge may fall between the two.
        return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "EXPIRY UTC", text)

    # Apart from the address itself, the two answers say the same: nothing tells who has an account.
    assert notice(known.text, other["email"]) == notice(unknown.text, "nobody-here@example.test")
    # The existing account joins only by accepting while signed in as that address.
    link = _link(known.text)
    with TestClient(client.app) as theirs:
        sign_in(theirs, org["email"])  # someone else signed in: cannot take the invitation
        wrong = theirs.post(f"{link}/accept", data={"csrf_token": csrf_of(theirs.get(link).text)})
        assert wrong.status_code == 400 and "sign in with that address" in wrong.text
        assert "Sign out, then open this link again" in theirs.get(link).text
    with TestClient(client.app) as theirs:
        assert theirs.get(f"/orgs/{org['org_slug']}", follow_redirects=False).status_code == 303
        sign_in(theirs, other["email"])
        assert theirs.get(f"/orgs/{org['org_slug']}").status_code == 404  # not a member before accepting
        page = theirs.get(link)
        accepted = theirs.post(
            f"{link}/accept", data={"csrf_token": csrf_of(page.text)}, follow_redirects=False
        )
        assert accepted.status_code == 303
        assert theirs.get(f"/orgs/{org['org_slug']}").status_code == 200


def test_withdrawn_and_expired_invitations_do_not_work(client, org_factory, stores) -> None:
    from datetime import timedelta

    from stacklens.control.models import Invitation, utcnow

    org = org_factory()
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/members"
    token = csrf_of(client.get(path).text)
    first = _link(_invite(client, path, token, "a@example.test").text)
    second = _link(_invite(client, path, token, "b@example.test").text)
    listing = client.get(path).text
    withdraw = re.search(r'action="([^"]+/revoke)"', listing)
    assert withdraw
    client.post(withdraw.group(1), data={"csrf_token": token})
    with session_scope(stores) as session:
        for row in session.scalars(select(Invitation)):
            if row.revoked_at is None:
                row.expires_at = utcnow() - timedelta(seconds=1)
    with TestClient(client.app) as invited:
        gone = [invited.get(link) for link in (first, second)]
    assert [r.status_code for r in gone] == [410, 410]
    assert "withdrawn" in gone[1].text + gone[0].text and "expired" in gone[0].text + gone[1].text


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
    refused = client.post(f"{path}/{their_id}/remove", data={"confirm": "yes", "csrf_token": token})
    assert refused.status_code == 404 and "no member" in refused.text
    assert client.get(f"{path}/{their_id}/remove").status_code == 404
    changed = client.post(f"{path}/{their_id}/role", data={"role": "member", "csrf_token": token})
    assert changed.status_code == 404
    assert client.get(f"/orgs/{other['org_slug']}/settings/members").status_code == 404
    # With a second owner, the first may leave; they land outside the organization afterwards.
    left = client.post(
        _remove_path(page, org["email"]), data={"confirm": "yes", "csrf_token": token}, follow_redirects=False
    )
    assert left.status_code == 303 and left.headers["location"] == "/"
    # Removal ended their sessions (this one too): signed in again, the organization is gone for them.
    assert client.get(path, follow_redirects=False).headers["location"].startswith("/login")
    sign_in(client, org["email"])
    assert client.get(path).status_code == 404
    sign_in(client, second)
    assert org["email"] not in client.get(path).text


def _role_path(html: str, email: str) -> str:
    row = re.search(rf"<td>{re.escape(email)}</td>.*?action=\"([^\"]+/role)\"", html, re.S)
    assert row, f"{email} not listed with a role form"
    return row.group(1)


def _roles(html: str) -> dict[str, str]:
    return dict(re.findall(r'<td>([^<]+@[^<]+)</td><td>[^<]*</td><td class="role">(\w+)</td>', html))


def test_owner_changes_roles_and_the_last_owner_stays(client, org_factory, stores) -> None:
    org = org_factory()
    member = add_member(stores, org, "member")
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/members"
    page = client.get(path).text
    token = csrf_of(page)
    assert _roles(page) == {org["email"]: "owner", member: "member"}

    # The only owner cannot step down: a clear message, nothing changed.
    refused = client.post(_role_path(page, org["email"]), data={"role": "member", "csrf_token": token})
    assert refused.status_code == 400 and "is the only owner, so they stay an owner" in refused.text
    bad = client.post(_role_path(page, member), data={"role": "superuser", "csrf_token": token})
    assert bad.status_code == 400 and "role must be one of owner, admin, member, viewer" in bad.text
    assert client.post(_role_path(page, member), data={"role": "owner"}).status_code == 400  # no CSRF

    promoted = client.post(
        _role_path(page, member), data={"role": "owner", "csrf_token": token}, follow_redirects=False
    )
    assert promoted.status_code == 303 and promoted.headers["location"] == path
    assert _roles(client.get(path).text) == {org["email"]: "owner", member: "owner"}
    # Two owners: the first may now step down, and lands on the settings a member may still see.
    stepped = client.post(
        _role_path(page, org["email"]), data={"role": "member", "csrf_token": token}, follow_redirects=False
    )
    assert stepped.status_code == 303 and stepped.headers["location"] == f"/orgs/{org['org_slug']}/settings"
    assert client.get(path).status_code == 403
    assert client.get(f"/orgs/{org['org_slug']}/settings").status_code == 200

    log = client.get(f"/orgs/{org['org_slug']}/settings/activity").text
    assert f"Changed the role of {member} from member to owner." in log
    assert f"Changed the role of {org['email']} from owner to member." in log
    with session_scope(stores) as session:
        entries = session.scalars(
            select(ActivityEntry)
            .where(ActivityEntry.action == "member.role_changed")
            .order_by(ActivityEntry.id)
        ).all()
    assert [e.detail["to"] for e in entries] == ["owner", "member"]


def _post_at_once(posts: list[tuple[TestClient, str, dict[str, str]]]) -> list[Any]:
    """Each browser's POST from its own thread, released together by a barrier; the answers in order."""
    barrier = threading.Barrier(len(posts))
    answers: list[Any] = [None] * len(posts)

    def post(index: int) -> None:
        browser, url, form = posts[index]
        barrier.wait()
        answers[index] = browser.post(url, data=form, follow_redirects=False)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(posts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def test_two_owners_demoting_and_removing_each_other_at_once_leave_one_owner(
    client, org_factory, stores
) -> None:
    """Two signed-in browsers, one owner each, post at the same moment: one demotes the other, the other
    removes the first. One change happens, the other is refused with the page's "only owner" / "last owner"
    message."""
    from stacklens.control import accounts

    for trial in range(5):
        org = org_factory(f"Crossing {trial}")
        second = add_member(stores, org, "owner")
        path = f"/orgs/{org['org_slug']}/settings/members"
        with TestClient(client.app) as first_browser, TestClient(client.app) as second_browser:
            sign_in(first_browser, org["email"])
            sign_in(second_browser, second)
            page = first_browser.get(path).text
            demote, first_token = _role_path(page, second), csrf_of(page)
            remove = _remove_path(second_browser.get(path).text, org["email"])
            second_token = csrf_of(second_browser.get(remove).text)
            posts = [
                (first_browser, demote, {"role": "member", "csrf_token": first_token}),
                (second_browser, remove, {"confirm": "yes", "csrf_token": second_token}),
            ]
            answers = _post_at_once(posts)

        # One change is made (303 back to the members page). The other is refused by the last-owner rule
        # (400), or — when the first has already committed by the time the second is checked — because its
        # sender is no longer an owner (403), no longer a member (404: the organization is not theirs), or no
        # longer signed in (removing a member ends their sessions: 303 to the sign-in page).
        def made(answer: Any) -> bool:
            return answer.status_code == 303 and "/login" not in answer.headers["location"]

        assert [made(a) for a in answers].count(True) == 1, (
            f"trial {trial}: {[(a.status_code, a.headers.get('location')) for a in answers]}"
        )
        refused = next(answer for answer in answers if not made(answer))
        assert refused.status_code in (303, 400, 403, 404), f"trial {trial}: {refused.status_code}"
        if refused.status_code == 400:
            assert (
                "is the only owner, so they stay an owner" in refused.text or "the last owner" in refused.text
            )
        with session_scope(stores) as session:
            owners = [u.email for u, role in accounts.list_members(session, org["org_id"]) if role == "owner"]
        assert len(owners) == 1, f"trial {trial}: owners {owners}"


def test_an_admin_manages_members_and_viewers_but_never_an_owner(client, org_factory, stores) -> None:
    org = org_factory()
    admin = add_member(stores, org, "admin")
    member = add_member(stores, org, "member")
    viewer = add_member(stores, org, "viewer")
    sign_in(client, admin)
    base = f"/orgs/{org['org_slug']}"
    path = f"{base}/settings/members"
    page = client.get(path)
    assert page.status_code == 200
    token = csrf_of(page.text)
    # The role selects offer up to admin, and the owner's row has no form nor a remove link.
    assert '<option value="owner"' not in page.text and '<option value="admin"' in page.text
    assert '<option value="viewer"' in page.text
    assert org["email"] in page.text and "only an owner changes an owner" in page.text
    assert page.text.count('class="inline role-form"') == 3  # admin, member, viewer: not the owner

    # Members and viewers move between member, viewer and admin; the log names the admin.
    for who, role in ((viewer, "member"), (member, "viewer"), (viewer, "admin")):
        moved = client.post(
            _role_path(page.text, who), data={"role": role, "csrf_token": token}, follow_redirects=False
        )
        assert moved.status_code == 303, moved.text[:300]
    assert _roles(client.get(path).text) == {
        org["email"]: "owner",
        admin: "admin",
        member: "viewer",
        viewer: "admin",
    }

    # Never an owner: not made one, not demoted, not removed (403 with why; nothing changed).
    owner_id = _user_id(stores, org["email"])
    made = client.post(_role_path(page.text, member), data={"role": "owner", "csrf_token": token})
    assert made.status_code == 403 and "only an owner can make someone an owner" in made.text
    for url, form in (
        (f"{path}/{owner_id}/role", {"role": "member"}),
        (f"{path}/{owner_id}/remove", {"confirm": "yes"}),
    ):
        refused = client.post(url, data={**form, "csrf_token": token})
        assert refused.status_code == 403 and "only an owner can change or remove an owner" in refused.text
    # Invitations: up to admin; an owner's invitation is the owners' to give (and to withdraw).
    invited = _invite(client, path, token, "new.admin@example.test", role="admin")
    assert invited.status_code == 201 and "join as <strong>admin</strong>" in invited.text
    refused = _invite(client, path, token, "new.owner@example.test", role="owner")
    assert refused.status_code == 403 and "only an owner can invite an owner" in refused.text

    # The admin removes a viewer (their sessions end), and reaches projects, teams and alerts, not the
    # organization's API key or single sign-on.
    removed = client.post(
        f"{path}/{_user_id(stores, member)}/remove", data={"confirm": "yes", "csrf_token": token}
    )
    assert removed.status_code == 200 and member not in _roles(removed.text)
    for allowed in (
        f"{base}/settings/teams",
        f"{base}/alerts/new",
        f"{base}/settings/channels",
        f"{base}/projects/{org['project']}/settings",
    ):
        assert client.get(allowed).status_code == 200, allowed
    for owners_only in (f"{base}/settings/api-keys", f"{base}/settings/sso", f"{base}/settings/audit"):
        answer = client.get(owners_only)
        assert answer.status_code == 403 and "Owners only" in answer.text, owners_only
    with session_scope(stores) as session:
        entries = session.scalars(
            select(ActivityEntry)
            .where(ActivityEntry.action == "member.role_changed")
            .order_by(ActivityEntry.id)
        ).all()
    assert [(e.detail["from"], e.detail["to"]) for e in entries] == [
        ("viewer", "member"),
        ("member", "viewer"),
        ("member", "admin"),
    ]


def _user_id(settings, email: str) -> int:
    from stacklens.control.models import User

    with session_scope(settings) as session:
        found = session.scalar(select(User.id).where(User.email == email))
        assert found is not None
        return int(found)


def test_a_member_and_a_viewer_cannot_manage_members(client, org_factory, stores) -> None:
    org = org_factory()
    for role, title in (("member", "Owners and admins only"), ("viewer", "Read-only access")):
        with TestClient(client.app) as browser:
            sign_in(browser, add_member(stores, org, role))
            path = f"/orgs/{org['org_slug']}/settings/members"
            assert browser.get(path).status_code == 403
            token = csrf_of(browser.get(f"/orgs/{org['org_slug']}/settings").text)
            refused = _invite(browser, path, token, "someone@example.test", role="member")
            assert refused.status_code == 403 and title in refused.text, (role, refused.text[:300])
