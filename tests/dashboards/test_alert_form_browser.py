"""The New Rule form in a real browser (issue #47): it shows the fields of the chosen rule type only (a
threshold for a threshold rule, the error filters for error rules, the count for event frequency) and ticks
the organization's only channel; a rule created with it notifies that channel. Screenshots at 1400 and 1024
px."""

from __future__ import annotations

import pytest

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from tests.browser import sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE, SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Which fields each type shows (name, type, project, window and environment always).
SHOWN = {
    "performance_budget": {"metric", "statistic", "scope", "threshold", "min_samples", "release"},
    "new_issue": {"release"},
    "event_frequency": {"threshold", "count_kind", "release"},
    "crash_free_rate": {"metric", "threshold", "min_samples"},
    "release_regression": set(),
}
FIELDS = ("metric", "statistic", "scope", "threshold", "min_samples", "count_kind", "release")


def test_the_form_shows_the_chosen_types_fields_and_ticks_the_only_channel(
    chromium, server, org_factory, stores
) -> None:
    org = org_factory()
    with session_scope(stores) as session:
        channel, _ = create_channel(
            session, int(org["org_id"]), stores, type="email", name="owners", to=["owner@acme.test"]
        )
        channel_id = channel.id
    alerts = f"{server}/orgs/{org['org_slug']}/alerts"
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{alerts}/new")
    assert page.locator(f"input[name=channels][value='{channel_id}']").is_checked()
    for kind, shown in SHOWN.items():
        page.select_option("#rule-type", kind)
        visible = {f for f in FIELDS if page.locator(f"[name={f}]").is_visible()}
        assert visible == shown, (kind, visible)
        for always in ("name", "project", "window", "environment"):
            assert page.locator(f"[name={always}]").is_visible(), (kind, always)
        if kind in ("new_issue", "performance_budget"):
            for width in (1400, 1024):
                page.set_viewport_size({"width": width, "height": 900})
                page.screenshot(path=str(SHOTS / f"alert_new_{kind}_{width}.png"), full_page=True)
    page.select_option("#rule-type", "new_issue")
    page.fill("input[name=name]", "Any new issue")
    page.click("#create-rule")
    page.wait_for_url(f"{alerts}/*")
    assert "owners" in page.locator("body").inner_text()
    assert page.evaluate("window.__csp") == []
    assert not errors, errors
