"""The operators' page in chromium at 1400 and 1024 px: storage per table and per project, migrations, the
maintenance log's backups and retention runs as they happened; a person who is not an operator finds nothing
there. Screenshots go to tests/_artifacts/operations/."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update

from stacklens.control.db import session_scope
from stacklens.control.models import User
from stacklens.control.project_retention import set_event_caps, set_project_retention
from stacklens.operations.backup import run_backup
from stacklens.operations.retention import apply_retention
from stacklens.operations.retention_schedule import tick
from stacklens.settings import Settings
from tests.api.live import serve
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, add_member
from tests.dashboards.landing import land, sdk_event

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _fail() -> None:
    raise ValueError("checkout failed")


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    with serve(stores) as url:
        yield url


def test_the_operators_page_shows_storage_and_every_maintenance_action(
    chromium, server, stores, org_factory, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    org = org_factory("Shop Company", "Checkout Web")
    land(org["org_id"], org["project_id"], [sdk_event(_fail) for _ in range(10)])
    sent = httpx.post(  # two more through the front door, counted as accepted
        f"{server}/api/ingest",
        content="\n".join(
            json.dumps({"v": 1, "type": "event", "app_key": org["app_key"], "payload": sdk_event(_fail)})
            for _ in range(2)
        ),
        headers={"Authorization": f"Bearer {org['api_key']}", "Content-Type": "application/x-ndjson"},
        timeout=30,
    )
    assert sent.status_code == 200, sent.text
    member = add_member(stores, org)
    with session_scope(stores) as session:
        session.execute(update(User).where(User.email == org["email"]).values(is_operator=True))
        set_project_retention(session, org["org_id"], org["project_id"], 30, stores.retention_days)
    run_backup(stores, tmp_path / "nightly")
    with pytest.raises(Exception, match="not empty"):
        run_backup(stores, tmp_path / "nightly")
    apply_retention(stores)
    with session_scope(stores) as session:
        set_event_caps(session, org["org_id"], org["project_id"], 1000, None)
    # The server's daily run, at a fixed clock: tomorrow's 03:31, after the run by hand above.
    tomorrow = datetime.now(UTC).replace(hour=3, minute=31, second=0, microsecond=0) + timedelta(days=1)
    assert tick(stores, tomorrow, datetime.now(UTC) - timedelta(days=1)) is not None

    shots = shots_dir("operations")
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    watch_errors(page, errors)
    sign_in_page(page, server, member, PASSWORD)
    assert page.goto(f"{server}/admin/operations").status == 404
    page.context.clear_cookies()
    sign_in_page(page, server, org["email"], PASSWORD)
    page.click("#nav-operations")  # operators find the page from every page's header
    expect(page).to_have_url(f"{server}/admin/operations")
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.goto(f"{server}/admin/operations").status == 200
        projects = page.locator("#ops-projects tbody tr")
        expect(projects).to_have_count(1)
        expect(projects.first).to_contain_text("shop-company/checkout-web")
        expect(projects.first).to_contain_text("12")
        expect(projects.first).to_contain_text("30 days")
        expect(page.locator("#ops-tables")).to_contain_text("events")
        expect(page.locator("#ops-outcomes [data-outcome=accepted]")).to_have_text("2")
        expect(page.locator("#ops-warehouse-bytes")).to_contain_text("KiB")
        expect(page.locator("#ops-warehouse-directory")).to_contain_text("iB")
        expect(page.locator("#ops-pending")).to_have_text("none pending")
        backups = page.locator("#ops-runs-backup tbody tr")
        expect(backups).to_have_count(2)
        expect(backups.nth(0)).to_have_attribute("data-outcome", "failed")
        expect(backups.nth(0)).to_contain_text("not empty")
        expect(backups.nth(1)).to_contain_text("full backup")
        expect(backups.nth(1)).to_contain_text("succeeded")
        expect(projects.first).to_contain_text("at most 1,000 events per issue")
        retention_runs = page.locator("#ops-runs-retention tbody tr")
        expect(retention_runs).to_have_count(2)
        expect(retention_runs.nth(0)).to_contain_text("retention (scheduled)")
        expect(retention_runs.nth(0)).to_contain_text("and 1 with event caps")
        expect(retention_runs.nth(1)).to_contain_text("manual retention run over 1 project")
        expect(page.locator("#ops-retention-schedule")).to_contain_text("daily at 03:30 UTC")
        expect(page.locator("#ops-runs-migrate")).to_contain_text("No stacklens migrate recorded yet")
        # The page's read waited for the two rows answered before it: nothing waits, counted once.
        expect(page.locator("#ops-rows-waiting")).to_have_text("0")
        # The drains' pace with its unit, or, when none ran in the window, that none did (never "0 ms").
        expect(page.locator("#ops-drains")).to_have_text(
            re.compile(
                r"^(\d+\.\d drains per second, the last in \d+ ms|no drain in the last 10 seconds \(.*\))$"
            )
        )
        # This test's server shares its engine with the tests' process: it does not own the warehouse.
        expect(page.locator("#ops-key-index")).to_contain_text("every key is looked up in the warehouse")
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        assert not overflow, f"the page is wider than {width} px"
        page.screenshot(path=str(shots / f"operations_{width}.png"), full_page=True)
    assert [e for e in errors if "status of 404" not in e] == []
