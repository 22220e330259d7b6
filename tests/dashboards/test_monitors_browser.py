"""The monitor pages in a real browser (Debian's chromium through Playwright) against a real uvicorn server,
over ten days of a cron job's check-ins (runs ok, one that failed, runs missed and found by detection) and an
uptime check's probes of a local site: the list shows status, schedule in words, next expected run, last
check-in and the 30-day timeline, "Monitors" is in the project's navigation, and a monitor's page shows its
check-ins with durations, its incidents and the uptime chart. Screenshots at 1024 px
(tests/_artifacts/monitors, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.monitors.checkins import CheckIn, record
from stacklens.monitors.detection import detect
from stacklens.monitors.schedules import next_expected, parse_schedule
from stacklens.monitors.store import create_monitor
from stacklens.monitors.uptime import probe_due
from stacklens.outbound import AllowList, OutboundClient
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = shots_dir("monitors")
BASE = "http://sl.test"


class _Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def seed(settings: Settings, org: dict[str, Any], site: str) -> None:
    """Ten days of a job every six hours: mostly ok (2-9 minutes), one error, a few runs missed; and an
    uptime check probed a few times."""
    rng = random.Random(64)
    now = datetime.now(UTC)
    start = (now - timedelta(days=10)).replace(minute=0, second=0, microsecond=0)
    allow = AllowList.parse("127.0.0.1")
    schedule = parse_schedule("0 */6 * * *")
    with session_scope(settings) as session:
        project = session.get(Project, org["project_id"])
        assert project is not None
        body = {"slug": "order-mail", "name": "Order mail", "schedule": "0 */6 * * *", "checkin_margin": 5}
        create_monitor(session, project, body, allow, now=start)
        create_monitor(
            session,
            project,
            {"slug": "shop", "name": "Shop", "kind": "uptime", "url": site, "interval_seconds": 60},
            allow,
            now=now - timedelta(minutes=5),
        )
    slot = next_expected(schedule, "UTC", start)
    n = 0
    while slot + timedelta(minutes=10) < now:
        n += 1
        fate = "missed" if n % 9 == 4 else "error" if n == 17 else "ok"
        if fate != "missed":
            began = slot + timedelta(seconds=rng.randint(1, 40))
            took = rng.uniform(120, 540)
            with session_scope(settings) as session:
                key = f"{n:032x}"
                for status, at in (("in_progress", began), (fate, began + timedelta(seconds=took))):
                    record(
                        session,
                        org["org_id"],
                        org["project_id"],
                        CheckIn(key, "order-mail", status, None, "production", None),
                        at,
                        allow,
                        BASE,
                    )
        detect(settings, BASE, slot + timedelta(minutes=6))
        slot = next_expected(schedule, "UTC", slot)
    warehouse = get_warehouse(settings)
    client = OutboundClient(allow=allow)
    for minutes in (4, 3, 2, 1):
        probe_due(settings, warehouse, BASE, client, now=now - timedelta(minutes=minutes))


def test_monitor_pages_at_1024_px(chromium, server: str, org_factory, stores: Settings, site: str) -> None:
    org = org_factory()
    seed(stores, org, site)
    base = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/monitors"
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD)
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues")
    page.click("a.project-link[href$='/monitors']")  # "Monitors" in the project's navigation
    page.wait_for_url(base)
    table = page.locator("#monitors-table")
    assert table.locator("tr[data-slug=order-mail] .monitor-status").inner_text() in ("ok", "missed")
    assert "every 6 hours" in table.locator("tr[data-slug=order-mail]").inner_text()
    assert table.locator("tr[data-slug=shop]").inner_text().count("every 60 s") == 1
    assert table.locator("tr[data-slug=shop] .timeline .day.status-ok").count() == 1
    days = table.locator("tr[data-slug=order-mail] .timeline .day")
    assert days.count() == 30
    ok = table.locator("tr[data-slug=order-mail] .timeline .day.status-ok").count()
    bad = table.locator(
        "tr[data-slug=order-mail] .timeline .day.status-some_failed, "
        "tr[data-slug=order-mail] .timeline .day.status-failed"
    ).count()
    assert ok >= 3 and bad >= 3 and ok + bad in (10, 11)  # ten days of runs, no day without one
    page.screenshot(path=str(SHOTS / "monitors-list-1024.png"), full_page=True)

    page.click("#monitors-table >> text=Order mail")
    page.wait_for_url(base + "/order-mail")
    rows = page.locator("#checkins tbody tr")
    assert rows.count() > 20
    assert page.locator("#checkins tbody td.num .duration-bar").count() > 20  # runs with durations
    incidents = page.locator("#incidents tbody tr")
    assert incidents.count() >= 3
    assert "error" in page.locator("#incidents").inner_text()
    page.screenshot(path=str(SHOTS / "monitor-cron-1024.png"), full_page=True)

    page.goto(base + "/shop")
    bars = page.locator("#uptime-chart .bar")
    assert bars.count() == 30
    assert page.locator("#uptime-chart .bar.none").count() == 29  # one day of probes; no day drawn as 0 %
    assert page.locator("#uptime-today").inner_text().startswith("100.0 % up")
    assert page.locator("#probes tbody tr").count() == 4
    assert page.locator("#probes tbody tr").first.locator("td.num").first.inner_text() == "200"
    page.screenshot(path=str(SHOTS / "monitor-uptime-1024.png"), full_page=True)
    assert errors == []
