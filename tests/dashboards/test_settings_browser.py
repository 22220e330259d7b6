"""Settings and navigation in chromium at 1024 px: "Sign out" stays on screen on every page (long
organization, project and e-mail names included), Settings → Channels exists, the project's Settings opens
the project's settings, Reveal shows an app key and its DSN together, a role change and a confirmed removal
work without inline scripts. No console errors (a CSP violation is one). Screenshots go to
tests/_artifacts/settings/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from tests.api.live import serve
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts" / "settings"
WIDTH = 1024
LONG_EMAIL = "a.rather-long-owner-address@example-company-international.test"


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    with serve(stores) as url:
        yield url


def test_settings_and_navigation_at_1024_px(chromium, server, stores, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory("Example Company International", "Checkout Storefront Web")
    with session_scope(stores) as session:
        accounts.add_member(session, org["org_id"], LONG_EMAIL, PASSWORD, "owner")
        accounts.add_member(session, org["org_id"], "second.person@example.test", PASSWORD, "member")
    slug, project = org["org_slug"], org["project"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": WIDTH, "height": 800})
    watch_errors(page, errors)
    sign_in_page(page, server, LONG_EMAIL, PASSWORD)

    pages = {
        "organization": f"/orgs/{slug}",
        "settings": f"/orgs/{slug}/settings",
        "api_tokens": f"/orgs/{slug}/settings/api-keys",
        "members": f"/orgs/{slug}/settings/members",
        "channels": f"/orgs/{slug}/settings/channels",
        "integrations": f"/orgs/{slug}/settings/integrations",
        "activity": f"/orgs/{slug}/settings/activity",
        "issues": f"/orgs/{slug}/projects/{project}/issues",
        "performance": f"/orgs/{slug}/projects/{project}/performance",
        "project_settings": f"/orgs/{slug}/projects/{project}/settings",
        "account": "/account",
    }
    for name, path in pages.items():
        page.goto(server + path)
        signout = page.get_by_role("button", name="Sign out")
        expect(signout).to_be_visible()
        box = signout.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (name, box)
        # The bar itself never scrolls sideways: it wraps.
        assert page.evaluate(
            "(() => { const h = document.querySelector('header.topbar'); return h.scrollWidth <= h.clientWidth; })()"
        ), name
        expect(page.get_by_role("link", name="Organization settings")).to_have_count(1)
        page.screenshot(path=str(ARTIFACTS / f"{name}_{WIDTH}.png"), full_page=True)

    # README: Settings → Channels.
    page.goto(f"{server}/orgs/{slug}")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Organization settings").click()
    page.wait_for_url(f"{server}/orgs/{slug}/settings")
    page.get_by_role("navigation", name="Organization settings").get_by_role("link", name="Channels").click()
    page.wait_for_url(f"{server}/orgs/{slug}/settings/channels")

    # The project's Settings opens the project's settings; Reveal shows the key and its DSN alike.
    page.goto(f"{server}/orgs/{slug}/projects/{project}/issues")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Project settings").click()
    page.wait_for_url(f"{server}/orgs/{slug}/projects/{project}/settings")
    expect(page.locator("code.dsn-value")).not_to_contain_text(org["app_key"])
    page.locator(".app-key-row .reveal-app-key").first.click()
    expect(page.locator(".app-key-row.revealed code.app-key-value")).to_have_text(org["app_key"])
    expect(page.locator("code.dsn-value").first).to_contain_text(f"//{org['app_key']}@")
    page.screenshot(path=str(ARTIFACTS / f"project_settings_revealed_{WIDTH}.png"), full_page=True)

    # Members: change a role, then remove someone through the confirmation page.
    page.goto(f"{server}/orgs/{slug}/settings/members")
    row = page.locator("tr.member-row", has_text="second.person@example.test")
    row.locator("select[name=role]").select_option("owner")
    row.get_by_role("button", name="Change role").click()
    expect(
        page.locator("tr.member-row", has_text="second.person@example.test").locator("td.role")
    ).to_have_text("owner")
    page.locator("tr.member-row", has_text="second.person@example.test").get_by_role(
        "link", name="Remove…"
    ).click()
    expect(page.locator("#confirm-remove")).to_contain_text("loses access to Example Company International")
    page.screenshot(path=str(ARTIFACTS / f"member_remove_{WIDTH}.png"), full_page=True)
    page.click("#confirm-remove-button")  # not ticked: the browser keeps the form here
    assert re.search(r"/members/\d+/remove$", page.url)
    page.check("#confirm-remove-box")
    page.click("#confirm-remove-button")
    page.wait_for_url(f"{server}/orgs/{slug}/settings/members")
    expect(page.locator("tr.member-row", has_text="second.person@example.test")).to_have_count(0)

    page.goto(f"{server}/orgs/{slug}/settings/activity")
    expect(page.locator("td.detail", has_text="Removed second.person@example.test")).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / f"activity_after_{WIDTH}.png"), full_page=True)
    assert errors == [], errors
