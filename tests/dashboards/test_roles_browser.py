"""A viewer in Debian's chromium against the real server, at 1024 px: the issue page shows the issue with no
form to change it (status, share, assign, links, comments) but the watch toggle, which works; the alert rules
and the organization's settings offer no write control; a form forced onto the page anyway is answered with
the plain read-only page. Screenshots go to tests/_artifacts/roles/."""

from __future__ import annotations

import pytest

from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, add_member
from tests.dashboards.landing import land, sdk_event

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _checkout() -> None:
    raise ValueError("card declined while charging order 42")


def test_a_viewer_sees_everything_and_no_write_control(chromium, server, stores, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory("Viewers Co")
    rows = land(org["org_id"], org["project_id"], [sdk_event(_checkout)])
    viewer = add_member(stores, org, "viewer")
    shots = shots_dir("roles")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    base = f"{server}/orgs/{org['org_slug']}"
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, viewer, PASSWORD, base)

    page.goto(f"{base}/projects/{org['project']}/issues/{rows[0]['issue_id']}")
    expect(page.locator("h1.issue-title")).to_contain_text("card declined")
    expect(page.locator("#read-only-note")).to_contain_text("You are a viewer in Viewers Co")
    for control in (
        "#status-actions",
        "#share-form",
        "#assign-form",
        "#comment-form",
        "#create-link-form",
    ):
        expect(page.locator(control)).to_have_count(0)
    expect(page.locator("#watch-button")).to_have_text("Watch")
    page.screenshot(path=str(shots / "issue_viewer_1024.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1024, f"the page is {width} px wide at 1024"
    page.click("#watch-button")
    expect(page.locator("#watch-button")).to_have_text("Unwatch")

    # A form forced onto the page (as a script or a stale tab could) is refused with the plain page.
    page.evaluate(
        """() => {
            const form = document.querySelector('#watch-form');
            form.action = form.action.replace(/watch$/, 'status');
            form.insertAdjacentHTML('beforeend', '<input type=hidden name=action value=resolve>');
            form.submit();
        }"""
    )
    expect(page.locator("h1")).to_have_text("Read-only access")
    expect(page.locator("main")).to_contain_text("You are a viewer in this organization")
    assert errors == ["Failed to load resource: the server responded with a status of 403 (Forbidden)"]
    errors.clear()

    page.goto(f"{base}/alerts")
    expect(page.locator("#new-rule")).to_have_count(0)
    page.goto(f"{base}/settings")
    expect(page.locator("#owners-note")).to_contain_text("You are a viewer here")
    expect(page.locator("select[name=share_links_by]")).to_have_count(0)
    expect(page.locator(".settings-tabs")).not_to_contain_text("Members")
    page.screenshot(path=str(shots / "settings_viewer_1024.png"), full_page=True)
    assert errors == []
