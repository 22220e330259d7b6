"""The project quota form in chromium at 1400 and 1024 px: the owner types limits and saves, the page shows
them; a bad box comes back named next to itself and at the top. No console errors (a CSP violation is one).
Screenshots go to tests/_artifacts/project_quota/."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from stacklens.metrics.units import binary_size
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
def test_the_quota_form_saves_and_names_a_bad_box(
    chromium, server, org_factory, stores: Settings, width: int
) -> None:
    from playwright.sync_api import expect

    org = org_factory("Quota Company", "Checkout Web")
    settings_page = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    shots = shots_dir("project_quota")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": width, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD)
    page.goto(settings_page + "#quota")
    page.fill("#quota-events_per_minute", "20000")
    page.fill("#quota-error", "1500")
    page.fill("#quota-transaction", "600")
    page.click("#quota-save")
    expect(page.locator("#quota-saved")).to_be_visible()
    expect(page.locator("#quota-events_per_minute")).to_have_value("20000")
    expect(page.locator("#quota-error")).to_have_value("1500")
    expect(page.locator("#quota-transaction")).to_have_value("600")
    expect(page.locator("#quota-log")).to_have_value("")
    # The attachment quota: the installation's until the project sets its own, in MiB, with what is kept.
    installation = binary_size(stores.attachment_quota_bytes)
    expect(page.locator("#quota-attachment_mib")).to_have_value("")
    expect(page.locator("#attachment-applied")).to_have_text(installation)
    expect(page.locator("#attachment-stored")).to_have_text("0 B")
    expect(page.locator("#attachment-quota-facts")).to_contain_text("the installation's quota")
    page.fill("#quota-attachment_mib", "2.5")
    page.click("#quota-save")
    expect(page.locator("#quota-saved")).to_be_visible()
    expect(page.locator("#quota-attachment_mib")).to_have_value("2.5")
    expect(page.locator("#attachment-applied")).to_have_text("2.5 MiB")
    expect(page.locator("#attachment-quota-facts")).to_contain_text("the project's own quota")
    expect(page.locator("#quota-error")).to_have_value("1500")  # the other limits kept
    quota = httpx.get(
        f"{server}/api/projects/{org['project']}/quota",
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=30,
    ).json()
    assert quota["attachment_bytes"] == quota["attachment_bytes_applied"] == int(2.5 * 1024**2), quota
    assert quota["categories"]["error"] == 1500, "saving the attachment quota kept the category limits"
    page.locator("#quota").screenshot(path=str(shots / f"saved_{width}.png"))

    page.fill("#quota-span", "-3")
    page.fill("#quota-attachment_mib", "a lot")
    page.click("#quota-save")
    expect(page.locator("#quota-attachment_mib-error")).to_contain_text(
        "Attachments kept (MiB) must be a number"
    )
    expect(page.locator("#quota-attachment_mib")).to_have_value("a lot")
    message = page.locator("#quota-span-error")
    expect(message).to_contain_text("Spans per minute must be a whole number")
    expect(page.get_by_role("alert")).to_contain_text("Spans per minute")
    expect(page.locator("#quota-span")).to_have_value("-3")
    # The message sits beside its box, on screen, not off the right edge.
    box = message.bounding_box()
    assert box and box["x"] + box["width"] <= width, box
    page.screenshot(path=str(shots / f"refused_{width}.png"), full_page=True)
    # The refused save is answered 400, which chromium logs as a failed load; anything else is a real error.
    assert [e for e in errors if "status of 400" not in e] == []
