"""A real browser (Debian's chromium through Playwright) against a real uvicorn server in this process:
sign in, list, filter, search, open an issue, filter breadcrumbs, compare two events, resolve and reopen,
share a link and open it signed out, regenerate the API key; hostile event data never executes; no console
errors anywhere. Screenshots go to tests/_artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land, sdk_event

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# `server` is a fixture of tests/dashboards/conftest.py; importable from here as before.
__all__ = ["HOSTILE"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts" / "dashboards"
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'


def _hostile(n: int) -> None:
    payload = {"html": HOSTILE, "n": n}  # noqa: F841 - a frame variable the event carries
    raise RuntimeError(HOSTILE)


def _events(org: dict) -> list[dict]:
    payloads = []
    for i in range(2):
        payload = sdk_event(
            lambda i=i: _hostile(i),
            user={"id": f"u{i}", "email": f"u{i}@example.test"},
            tags={"evil": HOSTILE, "tenant": f"t{i}"},
            extra={"note": HOSTILE, "link": "javascript:alert(1)"},
            crumbs=[
                {"category": "navigation", "message": "to /checkout"},
                {"category": "console", "message": HOSTILE},
            ],
        )
        payload["request"] = {
            "url": "javascript:alert(1)",
            "method": "GET",
            "headers": {"X-Evil": HOSTILE},
            "query_string": "q=" + HOSTILE,
        }
        payloads.append(payload)
    return land(org["org_id"], org["project_id"], payloads)


def test_dashboard_in_a_real_browser(chromium, server, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory()
    rows = _events(org)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    dialogs: list[str] = []
    page = chromium.new_page()
    watch_errors(page, errors)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    page.goto(f"{server}/login")
    page.screenshot(path=str(ARTIFACTS / "login.png"))
    page.fill("input[name=email]", org["email"])
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit].primary")
    page.wait_for_url(f"{server}/orgs/{org['org_slug']}")
    page.screenshot(path=str(ARTIFACTS / "organization.png"))
    page.click(f"a[href$='/projects/{org['project']}/issues']")
    expect(page.locator(".issue-row")).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / "issue_list.png"), full_page=True)

    page.fill("input[name=query]", "tenant:t1")
    page.click("#filters button[type=submit]")
    expect(page.locator(".issue-row")).to_have_count(1)
    page.fill("input[name=query]", "no-such-words")
    page.click("#filters button[type=submit]")
    expect(page.locator(".issue-row")).to_have_count(0)
    page.fill("input[name=query]", "")
    page.select_option("select[name=sort]", "events")
    page.click("#filters button[type=submit]")

    page.click("a.issue-title")
    page.wait_for_selector("#stack")
    expect(page.locator(".plot .main-svg").first).to_be_attached()
    page.screenshot(path=str(ARTIFACTS / "issue_detail.png"), full_page=True)
    page.select_option("#crumb-category", "navigation")
    expect(page.locator("tr.crumb:visible")).to_have_count(1)
    page.select_option("#crumb-category", "")
    page.fill("#crumb-search", "checkout")
    expect(page.locator("tr.crumb:visible")).to_have_count(1)

    picks = page.locator(".compare-pick")
    picks.nth(0).check()
    picks.nth(1).check()
    page.click("#compare-button")
    expect(page.locator("table.compare tr.differs").first).to_be_visible()
    # The stack trace frame by frame and the frames' locals come first (issue #47).
    sections = page.locator("table.compare tr.section").all_inner_texts()
    assert sections[:2] == ["Stack trace", "Local variables"], sections
    expect(page.locator("table.compare th", has_text="#1").first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=True)
    page.go_back()

    page.click("#status-actions button[value=resolve]")
    expect(page.locator("#issue-history .to-status").last).to_have_text("resolved")
    page.click("#status-actions button[value=reopen]")
    expect(page.locator("#issue-history .to-status").last).to_have_text("unresolved")

    page.click(".share-form button[type=submit]")
    share_url = page.input_value("#share-url")
    page.screenshot(path=str(ARTIFACTS / "share_created.png"))

    anonymous = chromium.new_context().new_page()
    watch_errors(anonymous, errors)
    anonymous.goto(share_url)
    expect(anonymous.locator("h1.issue-title")).to_contain_text("<script>")
    assert anonymous.locator("#status-actions").count() == 0
    assert anonymous.evaluate("window.__pwned") is None
    anonymous.screenshot(path=str(ARTIFACTS / "shared_issue.png"), full_page=True)

    page.goto(f"{server}/orgs/{org['org_slug']}/settings/api-keys/regenerate")
    page.screenshot(path=str(ARTIFACTS / "api_key_regenerate.png"))
    page.check("#confirm-regenerate")
    page.click("#regenerate")
    new_key = page.inner_text("#new-api-key")
    page.screenshot(path=str(ARTIFACTS / "api_keys.png"))
    old = page.request.get(f"{server}/api/auth/verify", headers={"Authorization": f"Bearer {org['api_key']}"})
    new = page.request.get(f"{server}/api/auth/verify", headers={"Authorization": f"Bearer {new_key}"})
    assert old.status == 401 and new.status == 200
    page.goto(f"{server}/orgs/{org['org_slug']}/settings/activity?api_key_only=true")
    expect(page.locator("td.action").first).to_contain_text("api_key")
    page.screenshot(path=str(ARTIFACTS / "activity.png"))

    page.goto(f"{server}/orgs/{org['org_slug']}/settings/members")
    page.fill("#invite-member input[name=email]", "teammate@example.test")
    page.click("#invite-member button[type=submit]")
    expect(page.locator(".invitation-row")).to_have_count(1)
    expect(page.locator("#invite-link")).to_have_value(re.compile(r"/invitations/"))
    page.screenshot(path=str(ARTIFACTS / "members.png"))
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/settings")
    expect(page.locator("h2").first).to_contain_text("App keys")
    expect(page.locator("#replay-setting h2")).to_have_text("Session replay")
    page.screenshot(path=str(ARTIFACTS / "project_settings.png"))

    assert page.evaluate("window.__pwned") is None
    assert rows and not dialogs, dialogs
    assert not errors, errors
