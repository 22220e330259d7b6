"""Settings pages: app keys (create, regenerate, revoke) for owners; members get 403 on every owner page;
another organization's project is a 404."""

from __future__ import annotations

import re

from sqlalchemy import select

from stacklens.control.auth import resolve_app_key
from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from tests.dashboards.conftest import add_member, csrf_of, sign_in


def _settings_path(org: dict) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"


def _new_key(html: str) -> str:
    match = re.search(r'id="new-app-key">([^<]+)<', html)
    assert match, "no new key shown"
    return match.group(1)


def _works(stores, org: dict, value: str) -> bool:
    with session_scope(stores) as session:
        return resolve_app_key(session, org["org_id"], value) is not None


def test_owner_creates_regenerates_and_revokes_app_keys(client, org_factory, stores) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    path = _settings_path(org)
    page = client.get(path)
    assert page.status_code == 200 and "(primary)" in page.text
    token = csrf_of(page.text)
    post = f"{path}/app-keys"

    created = client.post(post, data={"action": "create", "service": "frontend", "csrf_token": token})
    assert created.status_code == 200
    frontend = _new_key(created.text)
    assert _works(stores, org, frontend) and "frontend" in created.text
    # A new per-service key replaces nothing: the notice must not send anyone to redeploy.
    assert "The other keys keep working" in created.text and "previous value" not in created.text
    # The same service twice is refused with the reason, not a traceback.
    again = client.post(post, data={"action": "create", "service": "frontend", "csrf_token": token})
    assert again.status_code == 400 and "regenerate it instead" in again.text
    bad = client.post(post, data={"action": "create", "service": "Not A Service!", "csrf_token": token})
    assert bad.status_code == 400 and 'role="alert"' in bad.text

    # One click only asks: the confirmation names the consequence, and the key still works.
    asked = client.post(post, data={"action": "regenerate", "service": "frontend", "csrf_token": token})
    assert asked.status_code == 200 and "stops working at once" in asked.text
    assert 'name="confirm" value="yes"' in asked.text and _works(stores, org, frontend)
    regenerated = client.post(
        post, data={"action": "regenerate", "service": "frontend", "confirm": "yes", "csrf_token": token}
    )
    fresh = _new_key(regenerated.text)
    assert "The previous value stops working now" in regenerated.text
    assert fresh != frontend and _works(stores, org, fresh) and not _works(stores, org, frontend)

    asked = client.post(post, data={"action": "regenerate", "service": "", "csrf_token": token})
    assert "primary" in asked.text and _works(stores, org, org["app_key"])
    primary = client.post(
        post, data={"action": "regenerate", "service": "", "confirm": "yes", "csrf_token": token}
    )
    new_primary = _new_key(primary.text)
    # An owner can reveal an app key; the view is logged.
    shown = client.post(post, data={"action": "reveal", "service": "", "csrf_token": token})
    assert shown.status_code == 200 and new_primary in shown.text
    assert shown.headers["cache-control"] == "no-store"
    assert _works(stores, org, new_primary) and not _works(stores, org, org["app_key"])

    key_id = re.search(
        r'name="service" value="frontend"><input type="hidden" name="key_id" value="(\d+)"', primary.text
    )
    assert key_id
    asked = client.post(post, data={"action": "revoke", "key_id": key_id.group(1), "csrf_token": token})
    assert "is not replaced" in asked.text and _works(stores, org, fresh)
    revoked = client.post(
        post, data={"action": "revoke", "key_id": key_id.group(1), "confirm": "yes", "csrf_token": token}
    )
    assert revoked.status_code == 200 and not _works(stores, org, fresh)
    assert 'value="frontend"' not in revoked.text  # gone from the list

    # Without the form's CSRF token nothing changes.
    assert client.post(post, data={"action": "create", "service": "worker"}).status_code == 400
    with session_scope(stores) as session:
        actions = session.scalars(
            select(ActivityEntry.action).where(ActivityEntry.org_id == org["org_id"])
        ).all()
    assert {"app_key.created", "app_key.regenerated", "app_key.revoked", "app_key.viewed"} <= set(actions)
    assert actions.count("app_key.created") == 2  # the project's first key and "frontend"; not "worker"


def test_revoke_refuses_a_key_of_another_organization(client, org_factory, stores) -> None:
    mine, theirs = org_factory("Mine"), org_factory("Theirs")
    sign_in(client, mine["email"])
    theirs_page_key = None
    with session_scope(stores) as session:
        from stacklens.control.keys.lifecycle import list_app_keys

        theirs_page_key = list_app_keys(session, theirs["project_id"])[0].id
    path = _settings_path(mine)
    token = csrf_of(client.get(path).text)
    response = client.post(
        f"{path}/app-keys", data={"action": "revoke", "key_id": str(theirs_page_key), "csrf_token": token}
    )
    assert response.status_code == 404 and _works(stores, theirs, theirs["app_key"])
    # Their project's settings under their organization, or under mine: 404 both ways.
    assert client.get(_settings_path(theirs)).status_code == 404
    assert client.get(f"/orgs/{mine['org_slug']}/projects/{theirs['project']}/settings").status_code == 404
    assert (
        client.post(
            f"{_settings_path(theirs)}/app-keys",
            data={"action": "create", "service": "evil", "csrf_token": token},
        ).status_code
        == 404
    )


def test_members_get_403_on_owner_pages(client, org_factory, stores) -> None:
    org = org_factory()
    member = add_member(stores, org, "member")
    sign_in(client, member)
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}").text)
    org_base = f"/orgs/{org['org_slug']}/settings"
    for path in (
        f"{org_base}/api-keys",
        f"{org_base}/api-keys/regenerate",
        f"{org_base}/members",
        f"{org_base}/members/1/remove",
        _settings_path(org),
    ):
        response = client.get(path)
        assert response.status_code == 403, path
        # The API key's pages are the owners'; members and project settings the owners' and admins'.
        assert "Only the organization" in response.text and "owners" in response.text, path
    for path, data in (
        (f"{org_base}/api-keys/reveal", {}),
        (f"{org_base}/api-keys/regenerate", {"confirm": "yes"}),
        (f"{org_base}/members/invitations", {"email": "x@example.test", "role": "owner"}),
        (f"{org_base}/members/1/role", {"role": "member"}),
        (f"{org_base}/members/1/remove", {"confirm": "yes"}),
        (f"{_settings_path(org)}/app-keys", {"action": "regenerate", "service": ""}),
    ):
        response = client.post(path, data={**data, "csrf_token": token})
        assert response.status_code == 403, path
    # Nothing changed: the original keys still work and the member is still only a member.
    assert _works(stores, org, org["app_key"])
    with session_scope(stores) as session:
        from stacklens.control.auth import verify_api_key

        assert verify_api_key(session, org["api_key"]) is not None
    # Members still view: the organization page, the issue list and the activity log.
    assert client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/issues").status_code == 200
    assert client.get(f"{org_base}/activity").status_code == 200
    # A member's settings lead only where a member may go: no API tokens, no members, no project settings.
    landing = client.get(f"/orgs/{org['org_slug']}").text
    assert f'href="{org_base}"' in landing
    for owner_only in (f"{org_base}/api-keys", f"{org_base}/members", _settings_path(org)):
        assert f'href="{owner_only}"' not in landing + client.get(org_base).text


def test_activity_log_names_the_actor_and_hides_empty_details(client, org_factory) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    path = _settings_path(org)
    token = csrf_of(client.get(path).text)
    client.post(f"{path}/app-keys", data={"action": "create", "service": "worker", "csrf_token": token})
    page = client.get(f"/orgs/{org['org_slug']}/settings/activity")
    assert page.status_code == 200 and "<th>Actor</th>" in page.text
    row = next(line for line in page.text.splitlines() if "app_key.created" in line)
    assert f'<td class="actor">{org["email"]}</td>' in row
    assert re.search(r'<td class="detail">Created the worker app key …\w{4} of project [\w-]+\.</td>', row)
    # Details are sentences: no name=value pairs, no booleans, no microseconds.
    details = " ".join(re.findall(r'<td class="detail">(.*?)</td>', page.text))
    assert "Created the organization" in details
    assert not re.search(r"\w=\S|None|False|True|\d:\d\d\.\d", details), details


def test_api_key_rotation_from_the_dashboard(client, org_factory, stores) -> None:
    from stacklens.control.auth import verify_api_key

    def valid(value: str) -> bool:
        with session_scope(stores) as session:
            return verify_api_key(session, value) is not None

    org = org_factory()
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/settings/api-keys"
    page = client.get(base)
    assert page.headers["cache-control"] == "no-store" and 'id="create-next"' in page.text
    token = csrf_of(page.text)
    created = client.post(f"{base}/next", data={"csrf_token": token})
    assert created.status_code == 201
    upcoming = re.search(r'id="new-next-key">([^<]+)<', created.text)
    assert upcoming and valid(upcoming.group(1)) and valid(org["api_key"])
    assert client.post(f"{base}/next", data={"csrf_token": token}).status_code == 409
    confirm = client.get(f"{base}/regenerate").text
    assert f"…{upcoming.group(1)[-4:]}) becomes the current key" in confirm
    done = client.post(f"{base}/regenerate", data={"confirm": "yes", "csrf_token": token})
    assert done.status_code == 200 and upcoming.group(1) in done.text
    assert valid(upcoming.group(1)) and not valid(org["api_key"])


def test_app_key_and_dsn_are_masked_alike_until_reveal(client, org_factory, stores) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    path = _settings_path(org)
    page = client.get(path)
    # Neither the key nor the DSN carrying it is on the page before Reveal.
    assert org["app_key"] not in page.text
    masked = re.search(r'<code class="app-key-value">([^<]+)</code>', page.text)
    dsn = re.search(r'<code class="dsn-value">([^<]+)</code>', page.text)
    assert masked and dsn and "…" in masked.group(1)
    assert re.fullmatch(rf"http://{re.escape(masked.group(1))}@[^/]+/{org['project_id']}", dsn.group(1))

    token = csrf_of(page.text)
    shown = client.post(f"{path}/app-keys", data={"action": "reveal", "service": "", "csrf_token": token})
    assert shown.status_code == 200
    key = re.search(
        r'<tr class="app-key-row revealed">.*?<code class="app-key-value">([^<]+)</code>', shown.text, re.S
    )
    dsn = re.search(r'<code class="dsn-value">([^<]+)</code>', shown.text)
    assert key and key.group(1) == org["app_key"]
    assert dsn and re.fullmatch(
        rf"http://{re.escape(org['app_key'])}@[^/]+/{org['project_id']}", dsn.group(1)
    )
    assert "This view is recorded in the activity log" in shown.text
    with session_scope(stores) as session:
        views = session.scalars(
            select(ActivityEntry).where(
                ActivityEntry.org_id == org["org_id"], ActivityEntry.action == "app_key.viewed"
            )
        ).all()
    assert len(views) == 1 and views[0].detail["last4"] == org["app_key"][-4:]
    log = client.get(f"/orgs/{org['org_slug']}/settings/activity").text
    assert f"Revealed the primary app key …{org['app_key'][-4:]} and its DSN." in log
    # The next visit masks both again.
    assert org["app_key"] not in client.get(path).text
