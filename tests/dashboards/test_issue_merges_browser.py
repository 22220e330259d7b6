"""Merge and split in Debian's chromium against the real server: select two issues in the list and Merge (the
survivor's page shows their events and users together and a "Merged issues" section), the merged issue's old
address redirects to the survivor, the list shows one row whose figures equal the stored events, then Split
out gives the fingerprint its own issue back; both acts are in the history. Screenshots at 1400 and 1024 px
go to tests/_artifacts/merges/."""

from __future__ import annotations

import pytest

from stacklens.settings import get_settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.landing import land, sdk_event

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _declined() -> None:
    raise ValueError("card declined while charging order 42")


def _gateway() -> None:
    raise TimeoutError("payment gateway timed out")


def _stored_events(org_id: int, issue_id: int) -> int:
    rows = get_warehouse(get_settings()).query(
        "SELECT uniqExact(event_id) FROM events FINAL WHERE org_id = {o:UInt64} AND issue_id = {i:UInt64}",
        parameters={"o": org_id, "i": issue_id},
    )
    return int(rows.result_rows[0][0])


def test_merge_from_the_list_and_split_from_the_page(chromium, server, stores, org_factory) -> None:
    from playwright.sync_api import expect

    org = org_factory("Merge Co")
    payloads = [sdk_event(_declined, user={"id": f"u{n}"}) for n in range(3)]
    payloads += [sdk_event(_gateway, user={"id": f"u{n}"}) for n in (2, 3)]
    rows = land(org["org_id"], org["project_id"], payloads)
    declined, gateway = rows[0]["issue_id"], rows[3]["issue_id"]
    shots = shots_dir("merges")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    issues = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    page.goto(issues)
    expect(page.locator(".issue-row")).to_have_count(2)
    page.check(f"input[name=issue_ids][value='{declined}']")
    page.check(f"input[name=issue_ids][value='{gateway}']")
    page.screenshot(path=str(shots / "list_before_1400.png"), full_page=True)
    page.click("#bulk-merge")
    # Issue 71: asked first, naming the survivor (the issue with more events).
    expect(page.locator("#merge-survivor")).to_contain_text(f"(#{declined})")
    expect(page.locator(f"#merge-issues tr[data-issue='{declined}'] input[type=radio]")).to_be_checked()
    page.screenshot(path=str(shots / "merge_confirm_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.screenshot(path=str(shots / "merge_confirm_1024.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.click("#confirm-merge")
    page.wait_for_url(f"{issues}/{declined}?done=merged")
    merged = page.locator("#merged-issues .merged-row")
    expect(merged).to_have_count(1)
    expect(merged).to_contain_text("TimeoutError")
    expect(merged.locator("td").nth(4)).to_have_text("2")
    expect(page.locator("#issue-history .timeline-item.merge")).to_contain_text(
        f"merged issue {gateway} into"
    )
    page.screenshot(path=str(shots / "issue_merged_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.screenshot(path=str(shots / "issue_merged_1024.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})

    # The merged issue's address leads to the survivor.
    page.goto(f"{issues}/{gateway}")
    assert page.url == f"{issues}/{declined}"

    page.goto(issues)
    row = page.locator(".issue-row")
    expect(row).to_have_count(1)
    cells = row.locator("td")
    assert _stored_events(org["org_id"], declined) == 5
    expect(cells.nth(5)).to_have_text("5")
    expect(cells.nth(6)).to_have_text("4")  # u0–u3
    page.screenshot(path=str(shots / "list_merged_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.screenshot(path=str(shots / "list_merged_1024.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})

    page.goto(f"{issues}/{declined}")
    page.check("#merged-issues input[name=fingerprints]")
    page.click("#split-submit")
    page.wait_for_url(f"{issues}/{declined}?done=split#merged-issues")
    expect(page.locator("#merged-issues")).to_have_count(0)
    expect(page.locator("#issue-history .timeline-item.split")).to_contain_text(f"split out issue {gateway}")
    page.screenshot(path=str(shots / "issue_split_1400.png"), full_page=True)

    page.goto(issues)
    expect(page.locator(".issue-row")).to_have_count(2)
    assert (_stored_events(org["org_id"], declined), _stored_events(org["org_id"], gateway)) == (3, 2)
    page.screenshot(path=str(shots / "list_split_1400.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 900})
    page.screenshot(path=str(shots / "list_split_1024.png"), full_page=True)
    assert errors == []
