"""The demo's own history judged as `make up` shows it: of shop@1.0.0 … shop@1.4.0, exactly shop@1.3.0 — the
demo's designed regression — is flagged, in crash-free sessions and JavaScript per page view, on the releases
API and the releases page; every other release says "no significant change" (or is the first) — and so it
stays as the 30-day window slides over the history in the days after (its start cuts the oldest releases ever
more).

Everything is the demo's own code at its own volume: the shop (`python -m demo_shop.server`, its SDK tracking
request sessions), the traffic driver (`python -m demo.driver`: the 35-day backfill with its seed, releases
and rates, the mail worker's errors), their log lines posted to `POST /api/ingest` as the shipper posts
them, and the pipelines' sessions and performance jobs run once as the demo's catch-up runs them. Smaller
volumes are not the demo: the verdicts' significance depends on its sample sizes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from demo import traffic
from demo.backfill_report import read_report
from pipelines.definitions import definitions_for
from pipelines.embedded import dagster_instance, materialize_now
from stacklens.cli.app import build_app
from stacklens.cli.launch import DemoKeys, ensure_demo
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.releases.health import Window, release_health
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.demo.test_traffic import DAYS, ROOT, _free_port, _stop
from tests.e2e.e2e_stack import page_text

pytestmark = pytest.mark.slow
DESIGNED = "shop@1.3.0"
# The jobs the release pages read: the session states and the page-load states.
JOBS = ["session_periods", "pageload_periods"]


@pytest.fixture
def demo(settings: Settings, tmp_path: Path) -> tuple[DemoKeys, Path]:
    """The demo organization with its keys (as `stacklens up` makes it), and the log files its shop and
    traffic driver wrote: the driver's whole backfill through the shop (on a free port), then half a second
    of live traffic; the shop is stopped so its SDK writes the request sessions it still holds."""
    keys = ensure_demo(settings)
    storage = tmp_path / "logs"
    port = _free_port()
    shop_url = f"http://127.0.0.1:{port}"
    logs = ["--storage-path", str(storage)]
    shop_args = ["--app-key", keys.app_key, "--port", str(port), *logs]
    shop = subprocess.Popen(
        [sys.executable, "-m", "demo_shop.server", *shop_args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    marker = tmp_path / "demo" / "backfill.done"
    driver_args = ["--shop", shop_url, "--app-key", keys.app_key, "--worker-key", keys.worker_key, *logs]
    driver_args += ["--backfill-days", str(DAYS), "--backfill-marker", str(marker), "--duration", "0.5"]
    try:
        driver = subprocess.run(
            [sys.executable, "-m", "demo.driver", *driver_args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert driver.returncode == 0, driver.stderr[-2000:]
    finally:
        _stop(shop)
    assert shop.returncode in (0, -signal.SIGTERM)
    return keys, storage


def _ingest(client: TestClient, api_key: str, storage: Path) -> int:
    """Every log line posted to /api/ingest in batches of 500, as the shipper posts them; lines accepted."""
    lines = [
        line for path in sorted(storage.glob("stacklens-*.log")) for line in path.read_bytes().splitlines()
    ]
    accepted = 0
    for start in range(0, len(lines), 500):
        answer = client.post(
            "/api/ingest",
            content=b"\n".join(lines[start : start + 500]),
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/x-ndjson"},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["rejected"] == [], answer.json()["rejected"][:3]
        accepted += answer.json()["accepted"]
    return accepted


def test_the_demo_flags_exactly_its_designed_regression(
    demo: tuple[DemoKeys, Path], settings: Settings, tmp_path: Path
) -> None:
    keys, storage = demo
    report = read_report(tmp_path / "demo")
    assert report is not None and report.complete, report and report.lines()
    apply_migrations(settings)
    with TestClient(build_app(settings)) as client:
        assert _ingest(client, keys.api_key, storage) > 0
        instance = dagster_instance(settings)
        try:
            outcomes = materialize_now(definitions_for(settings), instance, JOBS)
        finally:
            instance.dispose()
        assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes if not o.success]

        # The releases API with the pages' default window (30 days), as a script of the demo's user reads it.
        answer = client.get(
            f"/api/projects/{keys.project}/releases",
            params={"order": "asc"},
            headers={"Authorization": f"Bearer {keys.api_key}"},
        )
        assert answer.status_code == 200, answer.text
        rows = {row["version"]: row for row in answer.json()["rows"]}

        # The releases page the demo's user signs in to.
        token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").text)
        assert token is not None
        login = {"email": keys.email, "password": keys.password, "csrf_token": token.group(1)}
        assert client.post("/login", data=login, follow_redirects=False).status_code == 303
        org = client.get("/", follow_redirects=True).url.path.split("/orgs/")[1].split("/")[0]
        page = client.get(f"/orgs/{org}/projects/{keys.project}/releases")
        assert page.status_code == 200, page.status_code

    assert list(rows) == [r.name for r in traffic.RELEASES]
    reasons = {version: row["verdict"]["reasons"] for version, row in rows.items()}
    flagged = [version for version, row in rows.items() if row["verdict"]["regression"]]
    assert flagged == [DESIGNED], reasons
    outcomes_of = {
        version: {c["metric"]: c["outcome"] for c in row["verdict"]["comparisons"]}
        for version, row in rows.items()
    }
    regressed = {m for m, o in outcomes_of[DESIGNED].items() if o == "regression"}
    assert {"crash_free_sessions", "js_bytes_per_view"} <= regressed, reasons[DESIGNED]
    designed = rows[DESIGNED]
    assert designed["previous_release"] == "shop@1.2.0"
    assert designed["crash_free_sessions_change"] < -1.0, designed
    assert designed["js_bytes_per_view_change_pct"] > 30, designed
    for version, row in list(rows.items())[1:]:  # the judged ones, at the demo's volume: a week each
        assert row["sessions"] >= 2000 and row["page_loads"] >= 600, (version, row)

    # And so it stays while the demo runs on: the 30-day window slides over the history (its start cuts the
    # oldest release ever more, then the next), every 7 hours over the next eight days, from the minute the
    # test runs. A verdict judges a release the window's start cut over its whole life to the window's end
    # (sessions, page loads and errors): judged over what the cut left, some minutes left shop@1.1.0 its last
    # ~250 page loads at a moment whose errors ran 30 % below its mean, and shop@1.2.0's errors read as a
    # regression.
    with session_scope(settings) as session:
        project = project_by_slug(session, keys.project)
        org_id, project_id = project.org_id, project.id
    warehouse = get_warehouse(settings)
    now = datetime.now(UTC)
    for hours in range(0, 24 * 8, 7):
        window = Window.last(timedelta(days=30), now + timedelta(hours=hours))
        later = release_health(warehouse, org_id, project_id, window)
        flagged = [r.version for r in later if r.verdict.regression]
        assert flagged == [DESIGNED], (hours, {r.version: r.verdict.reasons for r in later})

    # The page: one regression line and one flagged row, both 1.3.0's.
    assert page.text.count('class="warning regression"') == 1 and page.text.count('class="regressed"') == 1
    assert f'<tr class="regressed" data-version="{DESIGNED}">' in page.text
    assert f"{DESIGNED} regressed against shop@1.2.0: crash-free sessions, " in page_text(page.text)
