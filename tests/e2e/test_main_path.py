"""The main path as a user runs it, from a fresh data directory, nothing short-circuited.

``stacklens admin`` creates the organization, project and a per-service key; ``stacklens serve`` runs as its
own process (it owns the embedded warehouse: this test reads it only through HTTP); an application
instrumented with ``stacklens_sdk`` writes the log files; ``stacklens-shipper --record`` delivers them and is
killed with SIGKILL once midway, then restarted; ``stacklens pipelines run`` builds the marts. The issue list
and the issue pages must then show every event exactly once.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.e2e.e2e_contract import SECRET_PASSWORD, SECRET_TOKEN, SITES
from tests.e2e.e2e_stack import (
    BIN,
    Proc,
    Stack,
    all_issues,
    clean_env,
    page_text,
    shipper_status,
    sign_in,
    start_service,
    unhandled_errors,
    wait_for,
    write_shipper_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

HERE = Path(__file__).resolve().parent
OWNER = ("owner@e2e.example", "correct-horse-e2e")
EXPECTED_EVENTS = sum(SITES.values())


def batches_sent(proc: Proc) -> int:
    return len(re.findall(r"Batch sent: \d+ events", proc.output()))


def logged_event_ids(storage: Path) -> list[str]:
    """Event ids of the error events the SDK wrote (what the service must count, each once)."""
    ids = []
    for path in sorted(storage.glob("stacklens-*.log")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "event":
                ids.append(record["payload"]["event_id"].replace("-", "").lower())
    return ids


def issue_event_ids(api: httpx.Client, issue_id: str) -> list[str]:
    ids: list[str] = []
    cursor = ""
    while True:
        page = api.get(f"/api/issues/{issue_id}/events", params={"limit": 5, "cursor": cursor})
        assert page.status_code == 200, page.text
        body = page.json()
        ids.extend(e["event_id"].replace("-", "").lower() for e in body["events"])
        if not body["next_cursor"]:
            return ids
        cursor = body["next_cursor"]


def test_events_reach_the_dashboards_exactly_once_through_a_shipper_crash(tmp_path: Path) -> None:
    data, storage = tmp_path / "data", tmp_path / "logs"
    stack = Stack(tmp_path, clean_env(data))
    try:
        with stack.reporting():
            run_main_path(stack, storage)
    finally:
        stack.close()


def run_main_path(stack: Stack, storage: Path) -> None:
    stacklens = str(BIN / "stacklens")
    # 1-2. The organization and project (admin CLI), the server in its own process owning the embedded
    # warehouse under the fresh data dir, and the worker's per-service key.
    service = start_service(stack, "E2E Shop", OWNER, "Checkout Worker")
    org = service.org
    project = service.project
    port = service.port
    base = service.base
    server = service.server
    worker = stack.run_json([stacklens, "admin", "create-app-key", "--json",
                             "--project", project["slug"], "--service", "worker"])  # fmt: skip
    assert worker["app_key"].startswith("stacklens_app_worker_")
    api = httpx.Client(base_url=base, timeout=30.0, headers={"Authorization": f"Bearer {org['api_key']}"})

    # 3. The application and the shipper run side by side; the shipper is killed once while delivering.
    config = stack.root / "stacklens.yaml"
    write_shipper_config(config, org["api_key"], project["app_key"], port, storage)
    pause, resume = stack.root / "app.paused", stack.root / "app.resume"
    app = stack.start(
        "app",
        [sys.executable, "-m", "e2e_app", "--app-key", worker["app_key"], "--browser-key", project["app_key"],
         "--storage-path", str(storage), "--pause-file", str(pause), "--resume-file", str(resume)],
        PYTHONPATH=str(HERE),
    )  # fmt: skip
    wait_for("the application's first log file", lambda: list(storage.glob("stacklens-*.log")), 60)
    shipper_argv = [str(BIN / "stacklens-shipper"), "--config", str(config), "--record"]
    shipper = stack.start("shipper", shipper_argv)
    wait_for("two delivered batches", lambda: batches_sent(shipper) >= 2 or not shipper.running(), 60, 0.02)
    assert shipper.running(), f"the shipper exited with {shipper.popen.returncode}"
    shipper.stop(signal.SIGKILL)
    first_run_batches = batches_sent(shipper)
    resume.write_text("go")  # the second half of the traffic is written while no shipper runs
    assert app.wait(90) == 0, "the application failed"
    assert pause.exists(), "the application never paused halfway"

    written = logged_event_ids(storage)
    assert len(written) == EXPECTED_EVENTS == len(set(written)), "the SDK did not write each event once"
    pending = shipper_status(stack, config)["pending"]
    assert pending["lines"] > 0, f"the kill was not midway: nothing left to deliver ({pending})"

    shipper = stack.start("shipper", shipper_argv)
    wait_for(
        "the restarted shipper to deliver everything",
        lambda: shipper_status(stack, config)["pending"] == {"bytes": 0, "lines": 0} or not shipper.running(),
        90,
        0.5,
    )
    assert shipper.running(), f"the restarted shipper exited with {shipper.popen.returncode}"
    assert first_run_batches >= 2 and batches_sent(shipper) >= 1

    # 4. The pipelines, as an operator runs them next to the server (which owns the warehouse).
    ran = stack.run([stacklens, "pipelines", "run", "--json"], timeout=120)
    assert ran.returncode == 0, f"`stacklens pipelines run` failed:\n{ran.stdout[-1500:]}{ran.stderr[-1500:]}"
    assert json.loads(ran.stdout)["via"] == "server"
    pipelines = stack.run_json([stacklens, "pipelines", "status", "--json"])
    assert pipelines["failures"] == [], pipelines["failures"]
    assert pipelines["marts"]["issues"] == len(SITES), pipelines["marts"]
    assert pipelines["marts"]["pageload_periods"] >= 1, "the browser's page load is in no page-load state"

    # 5. The JSON API: exactly one issue per error site, every event counted once.
    issues = wait_for(
        f"{EXPECTED_EVENTS} events in the issue list",
        lambda: (
            (found := all_issues(api, project["slug"]))
            and sum(i["events"] for i in found) >= EXPECTED_EVENTS
            and found
        ),
        60,
        1.0,
    )
    assert len(issues) == len(SITES), [i["title"] for i in issues]
    assert sum(i["events"] for i in issues) == EXPECTED_EVENTS
    assert Counter(i["events"] for i in issues) == Counter(SITES.values())
    served: list[str] = []
    for issue in issues:
        ids = issue_event_ids(api, issue["id"])
        assert len(ids) == issue["events"], issue
        served.extend(ids)
    assert sorted(served) == sorted(written), "the events served are not the events written"
    by_title = {i["title"].split(":")[0]: i for i in issues}
    checkout = by_title["CheckoutError"]
    assert (
        checkout["culprit"].startswith("checkout_view in ") and checkout["events"] == SITES["checkout_view"]
    )
    assert by_title["PaymentDeclined"]["events"] == SITES["charge_card"]
    assert by_title["TypeError"]["events"] == SITES["browser_cart"]

    # 6. The pages, signed in as the owner through /login.
    browser = sign_in(base, *OWNER)
    home = browser.get("/")
    assert home.status_code == 303, home.status_code
    org_path = home.headers["location"]
    listing = browser.get(f"{org_path}/projects/{project['slug']}/issues", params={"status": "all"})
    assert listing.status_code == 200
    linked = set(re.findall(r"/issues/(\d+)(?=[\"?])", listing.text))
    assert linked == {i["id"] for i in issues}
    text = page_text(listing.text)
    for issue in issues:
        assert issue["title"][:40] in text
    detail = browser.get(f"{org_path}/projects/{project['slug']}/issues/{checkout['id']}")
    assert detail.status_code == 200
    text = page_text(detail.text)
    assert "CheckoutError" in text and "checkout_view" in text and "e2e_shop" in text
    assert f"{SITES['checkout_view']} events" in text
    assert re.search(r"Authorization \[FILTERED\]", text), "the Authorization header is not shown filtered"
    assert SECRET_TOKEN.split()[-1] not in detail.text and SECRET_PASSWORD not in detail.text
    browser.close()

    # 7. Nothing left to deliver, and the shipper stops cleanly.
    status = stack.run([str(BIN / "stacklens-shipper"), "--config", str(config), "--status"])
    assert "Pending: 0 bytes, 0 lines" in status.stdout, status.stdout
    assert shipper.stop(signal.SIGTERM) == 0

    # 8. The figures after the pipelines ran: still every event exactly once.
    after = all_issues(api, project["slug"])
    api.close()
    assert len(after) == len(SITES) and sum(i["events"] for i in after) == EXPECTED_EVENTS
    # Ctrl-C: a clean stop answers 0, or 130 (the shell's code for a command ended by SIGINT).
    assert server.stop(signal.SIGINT) in (0, 130)
    errors = unhandled_errors(server.output())
    assert not errors, f"the server logged unhandled exceptions on this path: {errors}"
