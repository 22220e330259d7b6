"""The demo tells the truth about traces (issue #47, point 3): the real driver (`python -m demo.driver`,
its SDK initialised as `stacklens up` runs it) against the real shop, its log lines posted to a real
StackLens server. Every shop request is its own trace, every worker job too; each log record stands in its
request's or job's trace, and the records name their service: the shop or the worker."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sentry_sdk
from fastapi.testclient import TestClient
from markupsafe import escape

from demo import traffic
from demo.clock import CLOCK_HEADER, encode_clock
from demo.delivery import RetryingTransport, Tally
from demo.driver import APP_KEY_ENV, ORIGIN, WORKER_KEY_ENV
from demo.feedback import ENVELOPE_URL_ENV, writes_feedback
from demo.traffic import CURRENT_RELEASE
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key
from stacklens.ingest.envelope import parse_envelope
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens_sdk.tunnel import browser_dsn
from tests.dashboards.conftest import sign_in
from tests.demo.test_traffic import ROOT, Shop, _ingest, _stop, run_shop

DECLINED_CARD = "4000000000000002"  # the demo's payment provider declines it (demo_shop/payments.py)


@pytest.fixture
def shop(make_org: Any, tmp_path: Path, dsn_server: str) -> Iterator[Shop]:
    """The demo shop as `stacklens up` starts it: its declined payments' attachments go to the project's
    envelope endpoint."""
    org = make_org("Demo")
    yield from run_shop(org, tmp_path / "logs", {ENVELOPE_URL_ENV: _envelope_url(dsn_server, org)})


def _envelope_url(server: str, org: dict[str, Any]) -> str:
    return f"{server}/api/{org['project_id']}/envelope/"


@contextmanager
def _no_trace_headers() -> Iterator[None]:
    """Another test of this worker may have started sentry-sdk in this process: its httpx integration would
    put the process's trace on every request sent here (over a page's own), joining them all in one trace."""
    options = sentry_sdk.get_client().options
    saved = options.get("trace_propagation_targets")
    options["trace_propagation_targets"] = []
    try:
        yield
    finally:
        options["trace_propagation_targets"] = saved


def _seeded_story(shop: Shop, site: traffic.Site, at: datetime) -> None:
    """Beside the run's random day, the demo's own paths until the pages below have what they show: a
    declined payment at ``at`` (the shop attaches the order), and history page loads until two visitors wrote
    feedback on their error, one whose session was recorded."""
    clock = {CLOCK_HEADER: encode_clock(at, CURRENT_RELEASE.name)}
    order: dict[str, Any] = {
        "items": [{"product_id": 2, "quantity": 1}],
        "country": "DE",
        "postcode": "10115",
    }
    order |= {"card_number": DECLINED_CARD, "email": "guest@example.com", "coupon": None, "password": None}
    writers: list[dict[str, Any]] = []

    def seen(request: httpx.Request) -> None:  # the page's errors, as the tunnel is sent them
        if request.url.path == "/tunnel":
            items = parse_envelope(request.content).items
            events = (json.loads(i.get_bytes()) for i in items if i.type == "event")
            writers.extend(e for e in events if writes_feedback(e))

    # The demo's transport: the shop's own bugs reset connections, and the demo sends those requests again.
    retrying = RetryingTransport()
    with (
        _no_trace_headers(),
        httpx.Client(
            base_url=shop.url, timeout=30, transport=retrying, event_hooks={"request": [seen]}
        ) as client,
    ):
        assert client.post("/api/checkout", json=order, headers=clock).status_code == 402
        for seed in range(1000):
            if len(writers) >= 2 and any(e["tags"].get("replayId") for e in writers):
                return
            traffic.page_load(
                client, random.Random(seed), site, CURRENT_RELEASE, at, Tally(), at.date(), True
            )
    raise AssertionError("a thousand page loads and no feedback with a replay")


def _written_traces(storage: str | Path, app_key: str) -> tuple[set[str], list[str]]:
    """The traces of the request transactions the SDK of ``app_key`` wrote, and each of its log records'
    trace, read from its log files."""
    requests: set[str] = set()
    records: list[str] = []
    for path in Path(storage).glob("stacklens-*.log"):
        for raw in path.read_bytes().splitlines():
            line = json.loads(raw)
            if line.get("app_key") != app_key:
                continue
            payload = line["payload"]
            if line.get("type") == "transaction":
                trace = payload.get("contexts", {}).get("trace", {})
                if trace.get("op") == "http.server":
                    requests.add(str(trace.get("trace_id")))
            elif line.get("type") == "log":
                records.append(str(payload.get("trace_id", "")))
    return requests, records


def _orphans(warehouse: Any, params: dict[str, Any], storage: str | Path) -> list[tuple[Any, ...]]:
    """The shop's records outside every request's transaction, each with the log-file lines of its trace: what
    a failure needs to tell a lost transaction from a record written outside a request."""
    rows = warehouse.query(
        "SELECT trace_id, timestamp, body FROM logs WHERE project_id = {project:UInt64} AND service = 'shop'"
        " AND trace_id NOT IN (SELECT trace_id FROM transactions WHERE project_id = {project:UInt64}"
        " AND op = 'http.server')",
        parameters=params,
    ).result_rows
    lines = [raw for path in Path(storage).glob("stacklens-*.log") for raw in path.read_bytes().splitlines()]
    return [
        (*row, [raw[:300] for raw in lines if str(row[0]).encode() in raw and b'"type": "log"' not in raw])
        for row in rows
    ]


def test_every_request_is_its_own_trace_and_its_mail_job_continues_it(
    dsn_server: str, shop: Shop, settings: Settings, client: TestClient
) -> None:
    org = shop.org
    with session_scope(settings) as session:
        worker_key = create_app_key(session, int(str(org["project_id"])), "worker")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "demo.driver",
            "--shop",
            shop.url,
            "--storage-path",
            str(shop.storage),
            "--backfill-days",
            "1",
            "--rate-scale",
            "0.4",
            "--duration",
            "1",
            "--backfill-marker",
            str(Path(shop.storage).parent / "backfill.done"),
        ],
        cwd=ROOT,
        # As `stacklens up` passes them: in the environment, not on the command line (`ps`).
        env={
            **os.environ,
            APP_KEY_ENV: str(org["app_key"]),
            WORKER_KEY_ENV: worker_key,
            # The page's feedback widget posts to the project's envelope endpoint (demo/feedback.py).
            ENVELOPE_URL_ENV: _envelope_url(dsn_server, org),
        },
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "feedback:" not in run.stdout, run.stdout[-2000:]  # every widget's post was accepted
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    at += timedelta(seconds=1 if int(at.timestamp()) % 40 == 0 else 0)  # not a device whose clock runs ahead
    site = traffic.Site(
        browser_dsn(str(org["app_key"])), ORIGIN, "production", _envelope_url(dsn_server, org)
    )
    _seeded_story(shop, site, at)
    _stop(shop.process)
    assert _ingest(dsn_server, str(org["api_key"]), shop.storage) > 0

    warehouse = get_warehouse(settings)
    params = {"project": org["project_id"]}
    requests, stored, traces = warehouse.query(
        "SELECT count(), uniqExact(event_id), uniqExact(trace_id) FROM transactions"
        " WHERE project_id = {project:UInt64} AND op = 'http.server' AND trace_id != ''",
        parameters=params,
    ).result_rows[0]
    assert requests >= 20 and stored == requests, "every shop request stored once"
    # One trace per request the driver makes. A page's checkout fetch continues its page load's trace, and the
    # demo sends a request the shop dropped again (RetryingTransport): a checkout's tries share a trace.
    shared = warehouse.query(
        "SELECT trace_id, groupUniqArray(page) FROM transactions WHERE project_id = {project:UInt64}"
        " AND op = 'http.server' AND trace_id != '' GROUP BY trace_id HAVING count() > 1",
        parameters=params,
    ).result_rows
    assert all(len(routes) == 1 and "/api/checkout" in routes[0] for _, routes in shared), shared[:5]

    services = dict(
        warehouse.query(
            "SELECT service, count() FROM logs WHERE project_id = {project:UInt64} GROUP BY service",
            parameters=params,
        ).result_rows
    )
    assert set(services) == {"shop", "worker"}, services
    # What the Logs page and its API list: each record with its service.
    answer = httpx.get(
        f"{dsn_server}/api/projects/{org['project']}/logs",
        params={"range": "7d", "limit": "500"},
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    assert {row["service"] for row in answer.json()["rows"]} == {"shop", "worker"}
    sign_in(client, str(org["email"]))
    page = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/logs", params={"range": "7d"})
    assert page.status_code == 200, page.status_code
    # The page's Service column (third cell of each record's row) and its filter name both.
    rows = [
        re.findall(r'<td class="nowrap">([^<]*)</td>', row)[1]
        for row in re.findall(r'<tr class="log-row">(.*?)</tr>', page.text, re.S)
    ]
    assert rows and set(rows) == {"shop", "worker"}, rows[:10]
    assert '<option value="shop"' in page.text and '<option value="worker"' in page.text

    # A shop record's trace is its request's (one transaction), and no request's trace holds another's records
    # beyond its own request: records per trace stay those of one request (at most the checkout's few lines).
    shop_logs, in_a_request, busiest = warehouse.query(
        "SELECT count(), countIf(trace_id IN (SELECT trace_id FROM transactions WHERE project_id = {project:UInt64}"
        " AND op = 'http.server')), max(n) FROM (SELECT trace_id, count() OVER (PARTITION BY trace_id) AS n"
        " FROM logs WHERE project_id = {project:UInt64} AND service = 'shop')",
        parameters=params,
    ).result_rows[0]
    # What the shop's SDK wrote: each request's transaction (its trace) and each record's trace. A record of a
    # request whose transaction the SDK did not write (dropped under load, reported or not) still stands in a
    # trace of its own request (`busiest`); StackLens must store every written transaction and join every
    # record of such a request to it.
    written, record_traces = _written_traces(shop.storage, str(org["app_key"]))
    assert traces == len(written), ("every transaction the shop wrote is stored", traces, len(written))
    stored_traces = [
        row[0]
        for row in warehouse.query(
            "SELECT trace_id FROM logs WHERE project_id = {project:UInt64} AND service = 'shop'",
            parameters=params,
        ).result_rows
    ]
    assert sorted(stored_traces) == sorted(record_traces), "every record the shop wrote is stored once"
    expected = sum(trace in written for trace in stored_traces)
    assert shop_logs > 0 and in_a_request == expected and busiest <= 5, (
        shop_logs,
        in_a_request,
        expected,
        busiest,
        _orphans(warehouse, params, shop.storage),
    )

    # Each worker job continues the trace of the checkout that placed its order (docs/traces.md): as many
    # traces as jobs (one record each), each holding the shop's checkout request and the worker's job.
    jobs, job_traces, in_checkout, in_job = warehouse.query(
        "SELECT count(), uniqExact(trace_id), countIf(trace_id IN (SELECT trace_id FROM transactions"
        " WHERE project_id = {project:UInt64} AND op = 'http.server' AND transaction LIKE '%checkout%')),"
        " countIf(trace_id IN (SELECT trace_id FROM transactions WHERE project_id = {project:UInt64}"
        " AND op = 'queue.process' AND service = 'worker')) FROM logs WHERE project_id = {project:UInt64}"
        " AND service = 'worker' AND trace_id != ''",
        parameters=params,
    ).result_rows[0]
    assert jobs >= 2 and job_traces == jobs and in_checkout == in_job == jobs, (jobs, job_traces, in_checkout)
    # The worker's failed mails (errors) stand in their job's trace, beside its record.
    errors, in_a_job, error_traces = warehouse.query(
        "SELECT count(), countIf(t IN (SELECT trace_id FROM logs WHERE project_id = {project:UInt64}"
        " AND service = 'worker')), uniqExact(t) FROM (SELECT JSONExtractString(payload, 'contexts', 'trace',"
        " 'trace_id') AS t FROM events WHERE project_id = {project:UInt64} AND service = 'worker')",
        parameters=params,
    ).result_rows[0]
    assert errors == in_a_job == error_traces, (errors, in_a_job, error_traces)

    # The trace of one mail job, on the trace page and from the API: the shop's checkout and the worker's job
    # in one tree, each service named (docs/traces.md). Screenshots of the page with this data at 1024 and
    # 1440 px (tests/_artifacts/traces).
    # A checkout page's trace: the browser's page load, its fetch answered by the shop, the worker's job.
    job_trace = warehouse.query(
        "SELECT any(trace_id) FROM transactions WHERE project_id = {project:UInt64} AND op = 'queue.process'"
        " AND trace_id IN (SELECT trace_id FROM transactions WHERE project_id = {project:UInt64}"
        " AND op = 'pageload')",
        parameters=params,
    ).result_rows[0][0]
    assert job_trace, "a checkout page load's trace continues into the worker's job"
    traced = httpx.get(
        f"{dsn_server}/api/traces/{job_trace}",
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=30,
    ).json()
    # The shop's spans name no service (its primary key, no `service` tag): its project's slug stands for it.
    # The page's spans are the project's too, named for the browser.
    assert {s["name"] for s in traced["services"]} == {
        org["project"],
        f"{org['project']} (browser)",
        "worker",
    }, traced["services"]
    job = next(s for s in traced["spans"] if s["op"] == "queue.process")
    publish = next(s for s in traced["spans"] if s["span_id"] == job["parent_span_id"])
    assert publish["op"] == "queue.publish" and publish["service"] == org["project"] and not job["orphan"]
    page = client.get(f"/orgs/{org['org_slug']}/traces/{job_trace}")
    assert page.status_code == 200 and "queue.process" in page.text
    _screenshots(page.text, "demo-trace")

    # The history's feedback is listed when it was written (the backfilled day), each speaking of its error.
    listed = httpx.get(
        f"{dsn_server}/api/projects/{org['project']}/feedback",
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=30,
    ).json()["rows"]
    errors_at = dict(
        warehouse.query(
            "SELECT replaceAll(toString(event_id), '-', ''), toUnixTimestamp64Milli(timestamp) / 1000 FROM events"
            " WHERE project_id = {project:UInt64}",
            parameters=params,
        ).result_rows
    )
    for row in listed:  # written 40 s after the error it speaks of, however long ago that was
        written_at = datetime.fromisoformat(row["received_at"].replace("Z", "+00:00")).timestamp()
        assert abs(written_at - errors_at[row["event_id"]] - 40) < 1, (row, errors_at.get(row["event_id"]))
    # Each feedback is linked to its error's issue; the seeded ones came with the visitor's replay.
    assert len(listed) >= 2 and all(row["issue_id"] for row in listed), listed
    with_replay = [row for row in listed if row["replay_id"]]
    assert with_replay, listed
    feedback_page = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/feedback")
    assert feedback_page.status_code == 200
    for row in listed:
        assert (
            f"/issues/{row['issue_id']}" in feedback_page.text
            and escape(row["message"]) in feedback_page.text
        )
    # Each names its issue by the issue's title, the one its page is headed with.
    named = dict(
        re.findall(
            r'class="feedback-issue" href="[^"]*/issues/(\d+)\?[^"]*"><span class="feedback-issue-title">([^<]+)<',
            feedback_page.text,
        )
    )
    assert set(named) == {str(row["issue_id"]) for row in listed}, named
    _screenshots(feedback_page.text, "demo-feedback", "feedback")
    issue_base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    issue_page = client.get(
        f"{issue_base}/{with_replay[0]['issue_id']}", params={"event": with_replay[0]["event_id"]}
    )
    assert issue_page.status_code == 200 and escape(with_replay[0]["message"]) in issue_page.text
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", issue_page.text, re.S)
    assert heading and named[str(with_replay[0]["issue_id"])] in heading.group(1), heading
    _screenshots(issue_page.text, "demo-issue-feedback", "feedback")

    # The declined payment's error lists the order the shop attached, with its size and type.
    declined = warehouse.query(
        "SELECT replaceAll(toString(event_id), '-', ''), issue_id FROM events WHERE project_id = {project:UInt64}"
        " AND exception_type = 'PaymentDeclined' ORDER BY timestamp",
        parameters=params,
    ).result_rows
    files = {
        event: httpx.get(
            f"{dsn_server}/api/events/{event}/attachments",
            headers={"Authorization": f"Bearer {org['api_key']}"},
            timeout=30,
        ).json()["rows"]
        for event, _ in declined
    }
    attached = [(event, issue) for event, issue in declined if files[event]]
    assert attached, files
    event, issue = attached[0]
    order = files[event][0]
    assert (order["filename"], order["content_type"]) == ("order.json", "application/json") and order[
        "size"
    ] > 50
    event_page = client.get(f"{issue_base}/{issue}", params={"event": event})
    assert event_page.status_code == 200
    cells = re.findall(r'<tr class="attachment-row">(.*?)</tr>', event_page.text, re.S)
    assert len(cells) == 1 and "order.json" in cells[0] and "application/json" in cells[0], cells
    assert re.search(r'class="num">[0-9.]+ (B|KiB)<', cells[0]), cells
    _screenshots(event_page.text, "demo-event-attachments", "feedback")


def _screenshots(html: str, name: str, folder: str = "traces") -> None:
    """The page's HTML in chromium at 1024 and 1440 px, its stylesheets written in (no server here)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import launch, shots_dir

    static = ROOT / "dashboards" / "static"
    for css in ("style.css", "traces.css"):
        html = html.replace(
            f'<link rel="stylesheet" href="/static/{css}">', f"<style>{(static / css).read_text()}</style>"
        )
    # The trace page's waterfall is drawn by its script: written in too; other scripts are left out.
    script = (static / "traces.js").read_text()
    html = html.replace("</body>", f"<script>{script}</script></body>")  # after the page, as defer runs it
    html = re.sub(r"<script[^>]*></script>", "", html)
    shots = shots_dir(folder)
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        page.route("**/*", lambda r: r.abort())  # nothing is fetched
        for width in (1024, 1440):
            page.set_viewport_size({"width": width, "height": 900})
            page.set_content(html)
            page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        browser.close()
