"""The trace page and the trace search page in Debian's chromium against a real server, over a trace made
of the demo's own browser page load (demo.browser_pageloads) whose checkout fetch the shop's server
transaction continues, the worker's job under the shop's queue span and a mailer span whose parent never
arrived — stored as ingest stores them. Screenshots at 1024 and 1440 px (tests/_artifacts/traces)."""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from demo import browser_pageloads
from demo.traffic import CURRENT_RELEASE
from stacklens.ingest.fields import Origin
from stacklens.ingest.transactions import spans_rows, transaction_row
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.api.sentry_live import envelope
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE

pytestmark = [pytest.mark.browser]
SHOTS = shots_dir("traces")


def _server_payload(
    trace_id: str,
    parent: str,
    start: float,
    name: str,
    op: str,
    children: list[tuple[str, str, float, float]],
) -> tuple[dict[str, Any], list[str]]:
    """A server transaction as sentry-python sends it, continuing ``parent``; its children as (op, text,
    start offset s, duration s). Answers the payload and the children's span ids."""
    root = uuid.uuid4().hex[:16]
    ids = [uuid.uuid4().hex[:16] for _ in children]
    end = start + max(o + d for _, _, o, d in children) + 0.004
    spans = [
        {"trace_id": trace_id, "span_id": sid, "parent_span_id": root, "op": c_op, "description": text,
         "start_timestamp": start + offset, "timestamp": start + offset + took}
        for sid, (c_op, text, offset, took) in zip(ids, children, strict=True)
    ]  # fmt: skip
    payload = {
        "event_id": uuid.uuid4().hex,
        "type": "transaction",
        "platform": "python",
        "transaction": name,
        "transaction_info": {"source": "route"},
        "start_timestamp": start,
        "timestamp": end,
        "release": "shop@2.4.0",
        "environment": "production",
        "contexts": {"trace": {"trace_id": trace_id, "span_id": root, "parent_span_id": parent, "op": op,
                               "status": "ok"}},
        "spans": spans,
    }  # fmt: skip
    return payload, ids


def seed_trace(settings: Settings, org_id: int, project_id: int) -> str:
    """The demo's page load of the checkout page, the shop's request under its checkout fetch, the worker's
    job under the shop's queue span, an orphan mailer span; the trace id."""
    rng = random.Random(68)
    at = datetime.now(UTC) - timedelta(minutes=30)
    load = browser_pageloads.pageload(
        rng, "https://shop.example", CURRENT_RELEASE, "production", at, "1004", False
    )
    trace_id = load["contexts"]["trace"]["trace_id"]
    fetch = next(s for s in load["spans"] if s["op"] == "http.client")
    shop, (_, _, publish) = _server_payload(
        trace_id,
        fetch["span_id"],
        fetch["start_timestamp"] + 0.003,
        fetch["description"].split("shop.example", 1)[1],  # the route the page fetched
        "http.server",
        [("db", "SELECT * FROM carts WHERE id = %s", 0.002, 0.006),
         ("http.client", "POST https://payments.example/charge", 0.01, 0.04),
         ("queue.publish", "order-mail", 0.052, 0.002)],
    )  # fmt: skip
    worker, _ = _server_payload(
        trace_id,
        publish,
        fetch["start_timestamp"] + 0.09,
        "order-mail",
        "queue.process",
        [("db", "SELECT email FROM customers WHERE id = %s", 0.001, 0.003),
         ("smtp", "send receipt", 0.005, 0.03)],
    )  # fmt: skip
    mailer, _ = _server_payload(
        trace_id, "0badc0ffee000001", fetch["start_timestamp"] + 0.1, "deliver", "function",
        [("smtp", "RCPT TO", 0.001, 0.01)],
    )  # fmt: skip
    tx_rows, span_rows = [], []
    for payload, service in ((load, None), (shop, "shop"), (worker, "worker"), (mailer, "mailer")):
        raw = json.dumps(payload)
        origin = Origin(org_id, project_id, service, uuid.uuid4().hex, time.time())
        row = transaction_row(payload, origin, raw.encode(), raw)
        tx_rows.append(row)
        span_rows.extend(spans_rows(payload, row, origin))
    # A log record the worker wrote in its job's span, and a replay of the browser session that saw the trace.
    job = next(r for r in span_rows if r["description"] == "send receipt")
    log = {
        "org_id": org_id,
        "project_id": project_id,
        "timestamp": job["timestamp"],
        "severity": "info",
        "severity_number": 9,
        "body": "mail: receipt ord_42 sent",
        "trace_id": trace_id,
        "span_id": job["parent_span_id"],
        "service": "worker",
        "source": "sentry",
        "dedup_key": "log-1",
    }
    replay = {"org_id": org_id, "project_id": project_id, "replay_id": str(uuid.uuid4()), "segment_id": 0,
              "timestamp": job["timestamp"], "replay_start": job["timestamp"], "trace_ids": [trace_id],
              "urls": ["https://shop.example/cart"]}  # fmt: skip
    client = get_warehouse(settings)
    segment = {"org_id": org_id, "project_id": project_id, "replay_id": replay["replay_id"], "segment_id": 0,
               "timestamp": job["timestamp"], "end_timestamp": job["timestamp"], "payload": "[]"}  # fmt: skip
    for table, rows in (("logs", [log]), ("replays", [replay]), ("replay_segments", [segment])):
        client.raw_insert(table, insert_block=json.dumps(rows[0]).encode(), fmt="JSONEachRow")
    for table, rows in (("transactions", tx_rows), ("spans", span_rows)):
        body = "\n".join(json.dumps(r, default=str) for r in rows).encode()
        client.raw_insert(table, insert_block=body, fmt="JSONEachRow")
    return str(trace_id)


def _send_error(server: str, org: dict[str, Any], trace_id: str) -> None:
    """An error the worker's job captured (its trace context names the job's span), as an SDK sends it, and
    the feedback sent about it during the replay that saw the trace."""
    trace = httpx.get(
        f"{server}/api/traces/{trace_id}", headers={"Authorization": f"Bearer {org['api_key']}"}, timeout=30
    ).json()
    span_id = next(s["span_id"] for s in trace["spans"] if s["op"] == "queue.process")
    event = {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "exception": {"values": [{"type": "SMTPError", "value": "mailbox unavailable"}]},
        "contexts": {"trace": {"trace_id": trace_id, "span_id": span_id}},
    }
    sent = httpx.post(
        f"{server}/api/{org['project_id']}/store/",
        params={"sentry_key": org["app_key"]},
        json=event,
        timeout=30,
    )
    assert sent.status_code == 200, sent.text
    # What the person wrote in the feedback widget during the replay that saw the trace (the SDK's item).
    feedback = {
        "type": "feedback",
        "event_id": uuid.uuid4().hex,
        "contexts": {
            "feedback": {
                "message": "The receipt never came.",
                "name": "Ada",
                "associated_event_id": event["event_id"],
                "replay_id": trace["replays"][0]["replay_id"].replace("-", ""),
            }
        },
    }
    item = ({"type": "feedback"}, json.dumps(feedback).encode())
    sent = httpx.post(
        f"{server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=envelope([item], {"event_id": feedback["event_id"]}),
        timeout=30,
    )
    assert sent.status_code == 200, sent.text


def test_trace_page_and_search_in_chromium(chromium, server: str, org_factory, stores: Settings) -> None:
    org, other = org_factory(), org_factory("Other")
    trace_id = seed_trace(stores, org["org_id"], org["project_id"])
    _send_error(server, org, trace_id)
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")

    search = f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/traces"
    # The project's navigation leads to the trace search.
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/issues")
    page.click("#nav-traces")
    page.wait_for_url(search)
    assert page.locator("#trace-results tbody tr").count() >= 1
    page.goto(f"{search}?service=worker")
    results = page.locator("#trace-results tbody tr")
    assert results.count() == 1 and "worker" in results.first.inner_text()
    page.screenshot(path=str(SHOTS / "trace-search-1440.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 800})
    page.screenshot(path=str(SHOTS / "trace-search-1024.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.click("#trace-results a.trace-link")
    page.wait_for_url(f"{server}/orgs/{org['org_slug']}/traces/{trace_id}")

    services = page.locator("#trace-services li")
    assert [services.nth(i).locator("strong").inner_text() for i in range(4)] == [
        f"{org['project']} (browser)",
        "shop",
        "worker",
        "mailer",
    ]
    # The waterfall holds the rows in view (and a few around them), not every span: the spans are data.
    waterfall = page.locator("#trace-waterfall")
    rows = waterfall.locator(".trace-row")
    spans = int(waterfall.locator(".trace-sizer").get_attribute("data-rows") or 0)
    assert spans > 20 and 10 < rows.count() <= spans
    first = rows.first.inner_text()
    assert org["project"] in first and "pageload" in first
    assert rows.first.locator("a.badge", has_text="page load").count() == 1
    assert waterfall.locator(".trace-row.critical").count() >= 3
    # Find in trace: matches counted, Enter brings each into view and shows its details below.
    find = page.locator("#trace-find")
    find.fill("order-mail")
    expect(page.locator("#trace-find-count")).to_have_text("2 spans match")  # the publish and the job
    find.fill("http.server")
    expect(page.locator("#trace-find-count")).to_have_text("1 span matches")
    find.press("Enter")
    shop = waterfall.locator(".trace-row.selected")
    expect(shop).to_be_visible()
    assert "/api/" in shop.inner_text() and "shop" in shop.inner_text()
    expect(page.locator("#span-detail")).to_contain_text("http.server")
    find.fill("queue.process")
    find.press("Enter")
    job = waterfall.locator(".trace-row.selected")
    expect(job.locator("a.log-badge")).to_have_text("1 log")  # the job's log record in place
    # The error the worker's job sent is marked in its row, listed below, and its link selects the row.
    expect(job.locator("a.error-badge")).to_have_count(1)
    assert page.locator("#trace-error-list tbody tr").count() == 1
    find.fill("")
    page.locator("#trace-error-list a[href^='#span-']").click()
    expect(waterfall.locator(".trace-row.selected")).to_contain_text("queue.process")
    expect(page.locator("#span-detail a.error-link")).to_have_text("Error: SMTPError: mailbox unavailable")
    expect(page.locator("#span-detail a.log-link")).to_contain_text("1 log record")
    expect(page.locator("#trace-next-error")).to_have_text("Next failed span (1)")
    # Only the critical path: every row drawn is on it.
    page.check("#trace-critical-only")
    assert rows.count() >= 3 and rows.count() == waterfall.locator(".trace-row.critical").count()
    page.uncheck("#trace-critical-only")
    orphan = page.locator("#trace-orphans .trace-row.orphan")
    assert orphan.count() == 1 and "mailer" in orphan.inner_text() and orphan.locator(".orphan-badge").count()
    assert page.locator("#orphan-count").inner_text() == "1 orphan span"
    assert page.locator("#trace-log-list tbody tr").count() == 1
    assert page.locator("#trace-replays a.replay-link").count() == 1
    widths = page.eval_on_selector_all("#trace-waterfall .trace-bar", "els => els.map(e => e.clientWidth)")
    assert min(widths) > 300, "every bar has room at 1440 px"
    page.screenshot(path=str(SHOTS / "trace-1440.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 800})
    overflow = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
    assert not overflow, "nothing wider than the window at 1024 px"
    page.screenshot(path=str(SHOTS / "trace-1024.png"), full_page=True)
    assert page.evaluate("window.__csp") == [] and errors == []

    # Reached from an event ("View trace" on its issue page), the page load's waterfall, the log record and
    # the replay.
    page.locator("#trace-error-list a", has_text="SMTPError").click()
    page.click("#view-trace")
    page.wait_for_url(f"{server}/orgs/{org['org_slug']}/traces/{trace_id}")
    page.locator("#trace-waterfall a.badge", has_text="page load").click()
    page.click("#view-trace")
    page.wait_for_url(f"{server}/orgs/{org['org_slug']}/traces/{trace_id}")
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/logs?range=24h")
    page.click("#log-records a.trace-page-link")
    page.wait_for_url(f"{server}/orgs/{org['org_slug']}/traces/{trace_id}")
    page.click("#trace-replays a.replay-link")
    page.wait_for_selector("#replay-traces")
    expect(page.locator("#replay-feedback .feedback-item")).to_contain_text("The receipt never came.")
    page.click("#replay-traces a.trace-page-link")
    page.wait_for_url(f"{server}/orgs/{org['org_slug']}/traces/{trace_id}")
    assert page.evaluate("window.__csp") == [] and errors == []

    outsider = chromium.new_page()
    sign_in_page(outsider, server, other["email"], PASSWORD, f"{server}/orgs/{other['org_slug']}")
    answer = outsider.goto(f"{server}/orgs/{other['org_slug']}/traces/{trace_id}")
    assert answer is not None and answer.status == 404, "another organization's trace is not found"
    outsider.close()
    page.close()
