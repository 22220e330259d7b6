"""The data scrubbing page in chromium at 1440 and 1024 px: reached from the project settings, it lists the
built-in scrubbing, refuses a bad selector naming the field (nothing saved), adds a rule from the form, and
previews it on a stored event (the field that would change, masked). No console errors besides the refused
form's 400. Screenshots go to tests/_artifacts/scrubbing/."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
from playwright.sync_api import Browser, expect

from tests.api.routers.test_scrubbing import live
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

__all__ = ["live"]


def _stored_event(live: dict[str, Any]) -> str:
    org = live["org"]
    event_id = uuid.uuid4().hex
    payload = {
        "event_id": event_id,
        "platform": "python",
        "level": "error",
        "timestamp": time.time(),
        "exception": {"values": [{"type": "ValueError", "value": "no receipt for sam@example.org"}]},
        "extra": {"contact": "sam@example.org", "order": "ord_1"},
    }
    line = {"v": 1, "type": "event", "app_key": org["app_key"], "payload": payload}
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    with httpx.Client(base_url=live["url"], headers=headers, timeout=60) as api:
        api.post("/api/ingest", json=line).raise_for_status()
        deadline = time.monotonic() + 60
        while api.get(f"/api/events/{event_id}").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.3)
    return event_id


def test_the_scrubbing_page_adds_a_rule_and_previews_it(live: dict[str, Any], chromium: Browser) -> None:
    org, server = live["org"], live["url"]
    event_id = _stored_event(live)
    shots = shots_dir("scrubbing")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD)
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['slug']}/settings")
    page.click("#settings-scrubbing-link")
    expect(page.locator("#built-in")).to_contain_text("card numbers")
    expect(page.locator("#no-rules")).to_be_visible()

    page.select_option("#rule-method", "mask")
    page.select_option("#rule-type", "email")
    page.fill("#rule-selector", "extra.&&")
    page.click("#add-rule")
    expect(page.locator("#scrubbing-error")).to_contain_text("rules[0].applies_to")
    expect(page.locator("#rule-selector")).to_have_value("extra.&&")
    expect(page.locator("#no-rules")).to_be_visible()  # nothing saved

    page.fill("#rule-selector", "$string && !extra.order")
    page.click("#add-rule")
    expect(page.locator("#scrubbing-saved")).to_be_visible()
    expect(page.locator(".scrub-rule")).to_have_count(1)
    expect(page.locator(".scrub-rule")).to_contain_text("$string && !extra.order")

    page.fill("#preview-event", event_id)
    page.click("#preview-run")
    changes = page.locator("#preview-changes")
    expect(changes).to_contain_text("extra.contact")
    expect(changes).to_contain_text("exception.values.0.value")
    expect(changes).to_contain_text("no receipt for " + "*" * len("sam@example.org"))
    assert "extra.order" not in changes.inner_text()
    page.screenshot(path=str(shots / "preview_1440.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.screenshot(path=str(shots / "preview_1024.png"), full_page=True)
    box = changes.bounding_box()
    assert box and box["x"] + box["width"] <= 1024, box
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['slug']}/settings")
    card = page.locator("#scrubbing-link")
    expect(card).to_contain_text("(1 rule)")
    card.screenshot(path=str(shots / "settings_card_1024.png"))
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['slug']}/settings/scrubbing?event_id=nope")
    expect(page.locator("#preview-error")).to_contain_text("No event 'nope'")
    page.close()
    assert [e for e in errors if "status of 400" not in e and "status of 404" not in e] == []
