"""The project's retention and event caps form in chromium at 1400 and 1024 px: the owner types days and
caps and saves, the page shows them and the retention run applies them; a bad box comes back named next to
itself and at the top. No console errors (a CSP violation is one). Screenshots go to
tests/_artifacts/project_retention/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stacklens.control.db import session_scope
from stacklens.control.project_retention import retention_of
from stacklens.settings import Settings
from tests.api.live import serve
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    with serve(stores) as url:
        yield url


@pytest.mark.parametrize("width", [1400, 1024])
def test_the_retention_form_saves_caps_and_names_a_bad_box(
    chromium, server, stores, org_factory, width: int
) -> None:
    from playwright.sync_api import expect

    org = org_factory("Keep Company", "Checkout Web")
    settings_page = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    shots = shots_dir("project_retention")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": width, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD)
    page.goto(settings_page + "#retention")
    expect(page.locator("#retention")).to_contain_text("the installation keeps 90 days")
    expect(page.locator("#retention-max_events_per_issue")).to_have_value("")
    page.fill("#retention-days", "30")
    page.fill("#retention-max_events_per_issue", "1,000")
    page.click("#retention-save")
    expect(page.locator("#retention-saved")).to_be_visible()
    expect(page.locator("#retention-days")).to_have_value("30")
    expect(page.locator("#retention-max_events_per_issue")).to_have_value("1000")
    expect(page.locator("#retention-max_events_per_project")).to_have_value("")
    page.locator("#retention").screenshot(path=str(shots / f"saved_{width}.png"))
    with session_scope(stores) as session:
        kept = retention_of(session, org["project_id"])
    assert (kept.days, kept.max_events_per_issue, kept.max_events_per_project) == (30, 1000, None)

    page.fill("#retention-max_events_per_project", "lots")
    page.fill("#retention-days", "400")
    page.click("#retention-save")
    message = page.locator("#retention-max_events_per_project-error")
    expect(message).to_contain_text("Events kept in the project: a whole number from 1 to 100,000,000")
    expect(page.locator("#retention-days-error")).to_contain_text("Days kept: a whole number from 1 to 90")
    expect(page.get_by_role("alert")).to_contain_text("The retention was not saved")
    expect(page.locator("#retention-max_events_per_project")).to_have_value("lots")
    box = message.bounding_box()
    assert box and box["x"] + box["width"] <= width, box
    page.locator("#retention").screenshot(path=str(shots / f"refused_{width}.png"))
    with session_scope(stores) as session:
        assert retention_of(session, org["project_id"]).max_events_per_project is None  # nothing changed
    assert [e for e in errors if "status of 400" not in e] == []
