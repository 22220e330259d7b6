"""Navigation and the organization's settings: `/orgs/{org}/settings` leads to API tokens, Members, Channels,
Integrations and the activity log (owners see all, members what they may read); the project's "Settings" opens
the project's settings; the account page keeps the navigation."""

from __future__ import annotations

import re

from tests.dashboards.conftest import add_member, sign_in


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
