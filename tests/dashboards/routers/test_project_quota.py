"""The project quota form on the project settings page: the owner saves the total and per-category limits and
sees them; a bad box changes nothing and is named; a member cannot save; the form needs its CSRF token."""

from __future__ import annotations

import html

from stacklens.control.db import session_scope
from stacklens.control.project_quotas import project_quotas
from stacklens.settings import Settings
from tests.dashboards.conftest import add_member, csrf_of, sign_in


def _box(page: str, name: str) -> str:
    """The value of the quota box ``name`` as the page shows it."""
    start = page.index(f'id="quota-{name}"')
    value = page[start:].split('value="', 1)[1].split('"', 1)[0]
    return html.unescape(value)


def test_the_owner_saves_the_quota_and_sees_it(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    before = client.get(settings_page).text
    assert _box(before, "events_per_minute") == "" and _box(before, "error") == ""
    token = csrf_of(before)

    saved = client.post(
        settings_page + "/quota",
        data={
            "events_per_minute": "12,000",
            "error": "500",
            "transaction": "300",
            "replay": "",
            "csrf_token": token,
        },
        follow_redirects=False,
    )
    assert saved.status_code == 303 and saved.headers["location"] == settings_page + "?saved=quota#quota"
    shown = client.get(saved.headers["location"]).text
    assert "Quota saved." in shown
    assert _box(shown, "events_per_minute") == "12000"
    assert (_box(shown, "error"), _box(shown, "transaction"), _box(shown, "replay")) == ("500", "300", "")
    with session_scope(stores) as session:
        quota = project_quotas(session, [org["project_id"]])[org["project_id"]]
    assert quota.events_per_minute == 12000 and dict(quota.categories) == {"error": 500, "transaction": 300}

    # Emptying a box removes that limit.
    cleared = client.post(
        settings_page + "/quota", data={"error": "500", "csrf_token": token}, follow_redirects=False
    )
    assert cleared.status_code == 303
    with session_scope(stores) as session:
        quota = project_quotas(session, [org["project_id"]])[org["project_id"]]
    assert quota.events_per_minute is None and dict(quota.categories) == {"error": 500}


def test_a_bad_box_is_named_and_changes_nothing(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    token = csrf_of(client.get(settings_page).text)
    client.post(settings_page + "/quota", data={"span": "900", "csrf_token": token}, follow_redirects=False)

    refused = client.post(
        settings_page + "/quota",
        data={"events_per_minute": "lots", "span": "0", "log": "250", "csrf_token": token},
        follow_redirects=False,
    )
    assert refused.status_code == 400
    page = html.unescape(refused.text)
    assert "Events per minute must be a whole number from 1 to 100,000,000" in page
    assert "Spans per minute must be a whole number" in page
    assert "Logs per minute must" not in page
    # The boxes come back as typed, the bad ones marked for assistive technology.
    assert _box(page, "events_per_minute") == "lots" and _box(page, "log") == "250"
    assert 'aria-describedby="quota-span-error"' in page
    with session_scope(stores) as session:
        quota = project_quotas(session, [org["project_id"]])[org["project_id"]]
    assert quota.events_per_minute is None and dict(quota.categories) == {"span": 900}

    # Without the CSRF token nothing is saved either.
    forged = client.post(settings_page + "/quota", data={"log": "1"}, follow_redirects=False)
    assert forged.status_code in (400, 403)
    with session_scope(stores) as session:
        assert dict(project_quotas(session, [org["project_id"]])[org["project_id"]].categories) == {
            "span": 900
        }


def test_a_member_cannot_change_the_quota(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    member = add_member(stores, org)
    sign_in(client, member)
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}").text)
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    refused = client.post(
        settings_page + "/quota", data={"events_per_minute": "5", "csrf_token": token}, follow_redirects=False
    )
    assert refused.status_code == 403
    with session_scope(stores) as session:
        assert project_quotas(session, [org["project_id"]])[org["project_id"]].events_per_minute is None
