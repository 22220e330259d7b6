"""The roles' gate of the pages (dashboards.context): a viewer is refused every write of every organization
page the app has registered — found by walking the app's routes, so a route added later is covered without
being named here — except the explicit allowlist; pages stay readable; the pages outside any organization
(signing in and out, the person's account and notification settings, invitations, single sign-on's callback)
are the known few, and a viewer can use their own."""

from __future__ import annotations

import re
from typing import Any

from fastapi.routing import iter_route_contexts

from dashboards.context import VIEWER_WRITES
from tests.dashboards.conftest import PASSWORD, add_member, csrf_of, sign_in

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# Every write of the pages that is not under an organization: no role applies to it. A new one fails
# test_every_write_outside_an_organization_is_a_known_personal_one until it is added here on purpose.
PERSONAL_WRITES = {
    ("POST", "/login"),
    ("POST", "/logout"),
    ("POST", "/account/password"),
    ("POST", "/account/notifications"),
    ("POST", "/invitations/{token}/accept"),
    ("POST", "/invitations/{token}/account"),
    # The member's own agent tokens and their approval of an MCP client (docs/agents.md): a viewer's token
    # or client still writes nothing, the role is checked at each tool call.
    ("POST", "/account/tokens"),
    ("POST", "/account/tokens/{token_id}/revoke"),
    ("POST", "/oauth/consent"),
}


def _page_writes(app: Any) -> list[tuple[str, str]]:
    """(method, path template) of every write route of the dashboards (not the JSON API's), however the
    routers are included."""
    found = []
    for route in iter_route_contexts(app.routes):
        module = getattr(route.endpoint, "__module__", "") or ""
        if not module.startswith("dashboards.") or not route.path:
            continue
        for method in sorted((route.methods or set()) & WRITES):
            found.append((method, route.path))
    return found


def _concrete(path: str, org: dict[str, Any]) -> str:
    values = {"org_slug": org["org_slug"], "project_slug": org["project"]}
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: values.get(m.group(1), "1"), path)


def test_a_viewer_is_refused_every_write_of_every_organization_page(client, org_factory, stores) -> None:
    org = org_factory()
    viewer = add_member(stores, org, "viewer")
    sign_in(client, viewer)
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}/settings").text)
    writes = [(m, p) for m, p in _page_writes(client.app) if p.startswith("/orgs/{org_slug}")]
    assert len(writes) > 50, writes  # the walk found the app's routes (134 page writes when written)
    refused = 0
    for method, path in writes:
        answer = client.request(
            method, _concrete(path, org), data={"csrf_token": token, "role": "owner"}, follow_redirects=False
        )
        if path in VIEWER_WRITES:
            assert answer.status_code != 403 and "Read-only access" not in answer.text, (method, path)
            continue
        assert answer.status_code == 403, (method, path, answer.status_code, answer.text[:300])
        assert "Read-only access" in answer.text and "You are a viewer" in answer.text, (method, path)
        refused += 1
    assert refused == len(writes) - len(VIEWER_WRITES)
    # Nothing changed: the viewer is still a viewer and the organization still has its one owner.
    from stacklens.control import accounts
    from stacklens.control.db import session_scope

    with session_scope(stores) as session:
        roles = {user.email: role for user, role in accounts.list_members(session, org["org_id"])}
    assert roles == {org["email"]: "owner", viewer: "viewer"}


def test_the_allowlist_names_only_registered_routes(client) -> None:
    paths = {path for _, path in _page_writes(client.app)}
    assert paths >= VIEWER_WRITES, VIEWER_WRITES - paths


def test_every_write_outside_an_organization_is_a_known_personal_one(client) -> None:
    outside = {(m, p) for m, p in _page_writes(client.app) if not p.startswith("/orgs/{org_slug}")}
    # Single sign-on's own doors (starting a sign-in, the provider's callback) belong to signing in.
    outside = {(m, p) for m, p in outside if not p.startswith("/auth/sso/")}
    assert outside == PERSONAL_WRITES


def test_a_viewer_reads_every_page_and_keeps_their_own_settings(client, org_factory, stores) -> None:
    org = org_factory()
    viewer = add_member(stores, org, "viewer")
    sign_in(client, viewer)
    base = f"/orgs/{org['org_slug']}"
    for path in (
        base,
        f"{base}/projects/{org['project']}/issues",
        f"{base}/alerts",
        f"{base}/settings",
        f"{base}/settings/teams",
        f"{base}/settings/channels",
        f"{base}/dashboards",
    ):
        page = client.get(path)
        assert page.status_code == 200, (path, page.status_code)
    settings = client.get(f"{base}/settings").text
    assert "You are a viewer here" in settings and 'name="share_links_by"' not in settings
    assert 'id="new-rule"' not in client.get(f"{base}/alerts").text
    issues = client.get(f"{base}/projects/{org['project']}/issues").text
    assert 'class="bulkbar"' not in issues and 'name="issue_ids"' not in issues
    # Their own notification preferences and password are theirs to change.
    page = client.get("/account/notifications")
    saved = client.post(
        "/account/notifications", data={"csrf_token": csrf_of(page.text)}, follow_redirects=False
    )
    assert saved.status_code == 303, saved.text[:300]
    account = client.get("/account")
    changed = client.post(
        "/account/password",
        data={
            "csrf_token": csrf_of(account.text),
            "current": PASSWORD,
            "new": "another-passw0rd-9",
        },
    )
    assert changed.status_code == 200 and "Password changed" in changed.text, changed.text[:500]
    token = csrf_of(client.get(base).text)
    assert client.post("/logout", data={"csrf_token": token}, follow_redirects=False).status_code == 303


def test_members_and_admins_are_not_read_only(client, org_factory, stores) -> None:
    org = org_factory()
    for role in ("member", "admin"):
        with type(client)(client.app) as browser:
            sign_in(browser, add_member(stores, org, role))
            base = f"/orgs/{org['org_slug']}"
            token = csrf_of(browser.get(base).text)
            made = browser.post(f"{base}/dashboards", data={"csrf_token": token, "name": f"{role}'s board"})
            assert made.status_code in (200, 303) and "Read-only access" not in made.text, made.text[:300]
