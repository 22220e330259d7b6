"""Navigation and the organization's settings: `/orgs/{org}/settings` leads to API tokens, Members, Channels,
Integrations and the activity log (owners see all, members what they may read); the project's "Settings" opens
the project's settings; the account page keeps the navigation."""

from __future__ import annotations

import re

import pytest

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, add_member, sign_in

SHOTS = shots_dir("dashboards")


def _links(html: str) -> list[tuple[str, str]]:
    """(href, text) of every link, tags stripped from the text."""
    return [
        (href, re.sub(r"<[^>]+>", "", text).strip())
        for href, text in re.findall(r'<a [^>]*?href="([^"]+)"[^>]*>(.*?)</a>', html, re.S)
    ]


def _nav(html: str) -> str:
    match = re.search(r'<header class="topbar">.*?</header>', html, re.S)
    assert match, "no top bar"
    return match.group(0)


def test_owner_reaches_every_section_from_settings(client, org_factory) -> None:
    org = org_factory("Acme Corp")
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/settings"
    landing = client.get(f"/orgs/{org['org_slug']}")
    assert (base, "Settings") in _links(_nav(landing.text))

    page = client.get(base)
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    links = _links(page.text)
    for href, text in (
        (f"{base}/api-keys", "API tokens"),
        (f"{base}/members", "Members"),
        (f"{base}/channels", "Channels"),
        (f"{base}/integrations", "Integrations"),
        (f"{base}/activity", "Activity"),
    ):
        assert (href, text) in links, text
        # Each section's page answers and shows the same sections, its own marked as the current one.
        section = client.get(href)
        assert section.status_code == 200, href
        assert re.search(
            rf'<a href="{re.escape(href)}" class="active" aria-current="page">{text}</a>', section.text
        )
    # What each section holds today, in words; the project's own settings are one click away.
    assert re.search(r"Current API key <code>stacklens_api_…\w{4}</code>", page.text)
    assert "1 person, 1 owner." in page.text
    assert "No notification channel yet" in page.text and "No issue tracker connected yet." in page.text
    assert (f"/orgs/{org['org_slug']}/projects/{org['project']}/settings", "Project settings") in links


def test_member_sees_what_members_may_read(client, org_factory, stores) -> None:
    org = org_factory()
    member = add_member(stores, org, "member")
    sign_in(client, member)
    base = f"/orgs/{org['org_slug']}/settings"
    page = client.get(base)
    assert page.status_code == 200
    hrefs = {href for href, _ in _links(page.text)}
    assert {f"{base}/channels", f"{base}/integrations", f"{base}/activity"} <= hrefs
    assert f"{base}/api-keys" not in hrefs and f"{base}/members" not in hrefs
    assert f"managed by the organization's owners: {org['email']}" in page.text
    assert "stacklens_api_" not in page.text
    # No project-settings link for a member: the page would answer 403.
    issues = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/issues").text
    assert f"/projects/{org['project']}/settings" not in issues


def test_admin_sees_what_admins_manage_and_not_the_owners_own(client, org_factory, stores) -> None:
    org = org_factory()
    sign_in(client, add_member(stores, org, "admin"))
    base = f"/orgs/{org['org_slug']}/settings"
    page = client.get(base)
    assert page.status_code == 200
    hrefs = {href for href, _ in _links(page.text)}
    assert {f"{base}/members", f"{base}/teams", f"{base}/channels"} <= hrefs
    assert f"{base}/api-keys" not in hrefs and f"{base}/sso" not in hrefs and f"{base}/audit" not in hrefs
    assert f"/projects/{org['project']}/settings" in page.text and 'name="share_links_by"' in page.text
    assert (
        f"API tokens and single sign-on are managed by the organization's owners: {org['email']}" in page.text
    )
    assert "stacklens_api_" not in page.text


def test_project_settings_link_opens_the_projects_settings(client, org_factory) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    issues = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/issues")
    nav = _links(_nav(issues.text))
    project_settings = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    # In a project the bar holds both: the project's "Settings" and the organization's, named apart.
    assert (project_settings, "Settings") in nav
    assert (f"/orgs/{org['org_slug']}/settings", "Organization settings") in nav
    assert 'aria-label="Project settings"' in _nav(issues.text)
    assert client.get(project_settings).status_code == 200


def test_account_page_has_the_navigation(client, org_factory) -> None:
    org = org_factory("Acme Corp")
    sign_in(client, org["email"])
    for path in ("/account", f"/account?org={org['org_slug']}", "/account?org=not-mine"):
        page = client.get(path)
        assert page.status_code == 200, path
        nav = _links(_nav(page.text))
        assert (f"/orgs/{org['org_slug']}", "Acme Corp") in nav, path
        assert (f"/orgs/{org['org_slug']}/settings", "Settings") in nav, path
    # The link to the account page carries the organization it was opened from.
    assert (f"/account?org={org['org_slug']}", org["email"]) in _links(
        _nav(client.get(f"/orgs/{org['org_slug']}").text)
    )
    # A wrong current password answers on the same page, navigation included.
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/account").text).group(1)
    refused = client.post(
        "/account/password",
        data={
            "current": "wrong-password",
            "new": "a long new phrase",
            "org": org["org_slug"],
            "csrf_token": token,
        },
    )
    assert refused.status_code == 400 and (f"/orgs/{org['org_slug']}/settings", "Settings") in _links(
        _nav(refused.text)
    )


def test_owners_choose_who_may_publish_share_links(client, org_factory, stores) -> None:
    """Issue #62: owners only by default; the setting on the settings page (owners change it, members read
    it), and a member's publishing follows it."""
    from stacklens.control.db import session_scope
    from stacklens.explore.dashboards import create_dashboard
    from tests.dashboards.conftest import csrf_of

    org = org_factory("Acme Corp")
    with session_scope(stores) as session:
        board = create_dashboard(session, org["org_id"], {"name": "Vitals"}).id
    member = add_member(stores, org)
    base = f"/orgs/{org['org_slug']}/settings"
    share = f"/orgs/{org['org_slug']}/dashboards/{board}/share"

    sign_in(client, member)
    page = client.get(base).text
    assert "Public links are published by: <strong>Owners and admins</strong>" in page
    assert 'name="share_links_by"' not in page  # no control for a member
    refused = client.post(share, data={"csrf_token": csrf_of(page), "expires_in_days": "7"})
    assert refused.status_code == 403 and "only the organization" in refused.text
    assert (
        client.post(
            f"{base}/share-links", data={"csrf_token": csrf_of(page), "share_links_by": "members"}
        ).status_code
        == 403
    )

    client.cookies.clear()
    sign_in(client, org["email"])
    page = client.get(base).text
    assert re.search(r'<option value="owners" selected>Owners and admins</option>', page)
    for bad in ("admins", ""):
        answer = client.post(f"{base}/share-links", data={"csrf_token": csrf_of(page), "share_links_by": bad})
        assert answer.status_code == 400 and "share_links_by: one of owners, members" in answer.text
    changed = client.post(
        f"{base}/share-links",
        data={"csrf_token": csrf_of(page), "share_links_by": "members"},
        follow_redirects=False,
    )
    assert changed.status_code == 303 and changed.headers["location"].endswith("#settings-share-links")
    assert re.search(
        r'<option value="members" selected>All members \(not viewers\)</option>', client.get(base).text
    )

    client.cookies.clear()
    sign_in(client, member)
    page = client.get(base).text
    assert "Public links are published by: <strong>All members (not viewers)</strong>" in page
    made = client.post(share, data={"csrf_token": csrf_of(page), "expires_in_days": "7"})
    assert made.status_code == 200 and "/share/dashboards/" in made.text


@pytest.mark.browser
def test_the_share_links_setting_in_a_real_browser(chromium, server, org_factory) -> None:
    """The owner changes who may publish share links on the settings page: the control is labelled, fits the
    card, saves and comes back selected (screenshot at 1400 px, of the card)."""

    org = org_factory("Acme Corp")
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD)
    page.goto(f"{server}/orgs/{org['org_slug']}/settings")
    card = page.locator("#settings-share-links")
    control = page.get_by_label("Who may publish public links")
    assert control.input_value() == "owners"
    box, inside = card.bounding_box(), control.bounding_box()
    assert box and inside and inside["x"] + inside["width"] <= box["x"] + box["width"]
    control.select_option("members")
    card.get_by_role("button", name="Save").click()
    page.wait_for_url("**/settings#settings-share-links")
    assert page.get_by_label("Who may publish public links").input_value() == "members"
    card.screenshot(path=str(SHOTS / "org-settings-share-links.png"))
    page.screenshot(path=str(SHOTS / "org-settings-share-links-page.png"), full_page=True)
    assert errors == []
