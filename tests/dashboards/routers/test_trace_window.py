"""A large trace on the trace page in Debian's chromium: only the rows in view are in the document, scrolling
brings the others, and the keyboard, "Find in trace", folding, failed spans and the critical path reach every
span of it. 1,200 spans of three services, stored as ingest stores them."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.dashboards.test_performance_browser import CSP_PROBE

pytestmark = [pytest.mark.browser]
SPANS = 1200
SERVICES = ("gateway", "orders", "payments")


def _seed(settings: Settings, org_id: int, project_id: int) -> str:
    """One transaction per service, each continuing a span of the one before; 1,200 spans in all, nested up
    to a few levels, every 100th failed. Span ``k``'s description is ``step k``."""
    rng = random.Random(1200)
    trace_id = uuid.uuid4().hex
    start = datetime.now(UTC) - timedelta(minutes=20)
    per = SPANS // len(SERVICES)
    transactions, spans = [], []
    parent, k = "", 0
    for n, service in enumerate(SERVICES):
        event_id, root = str(uuid.uuid4()), uuid.uuid4().hex[:16]
        t0 = start + timedelta(milliseconds=30 * n)
        ids = [root]
        for _ in range(per - 1):
            k += 1
            sid = uuid.uuid4().hex[:16]
            spans.append(
                {"org_id": org_id, "project_id": project_id, "transaction_event_id": event_id,
                 "trace_id": trace_id, "span_id": sid, "parent_span_id": rng.choice(ids[-6:]),
                 "timestamp": (t0 + timedelta(milliseconds=rng.uniform(0, 800))).isoformat(sep=" ")[:23],
                 "duration_ms": rng.uniform(0.5, 150), "received_at": t0.isoformat(sep=" ")[:23],
                 "op": "db", "description": f"step {k}", "status": "internal_error" if k % 100 == 0 else "ok",
                 "service": service, "release": "1.0.0", "environment": "production"}
            )  # fmt: skip
            ids.append(sid)
        payload = json.dumps({"contexts": {"trace": {"span_id": root, "parent_span_id": parent}}})
        transactions.append(
            {"org_id": org_id, "project_id": project_id, "event_id": event_id, "trace_id": trace_id,
             "timestamp": t0.isoformat(sep=" ")[:23], "end_timestamp": t0.isoformat(sep=" ")[:23],
             "received_at": t0.isoformat(sep=" ")[:23], "op": "http.server", "status": "ok",
             "duration_ms": 1000.0 - 30 * n, "transaction": f"/{service}", "service": service,
             "release": "1.0.0", "environment": "production", "payload": payload}
        )  # fmt: skip
        parent = ids[rng.randrange(1, per)]
    client = get_warehouse(settings)
    for table, rows in (("transactions", transactions), ("spans", spans)):
        client.raw_insert(
            table, insert_block="\n".join(json.dumps(r) for r in rows).encode(), fmt="JSONEachRow"
        )
    return trace_id


def test_a_large_trace_draws_the_rows_in_view(chromium, server: str, org_factory, stores: Settings) -> None:
    org = org_factory("Window Company", "Orders")
    trace_id = _seed(stores, org["org_id"], org["project_id"])
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 800})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{server}/orgs/{org['org_slug']}/traces/{trace_id}")

    waterfall = page.locator("#trace-waterfall")
    viewport = waterfall.locator(".trace-viewport")
    rows = waterfall.locator(".trace-row")
    assert waterfall.locator(".trace-sizer").get_attribute("data-rows") == str(SPANS)
    drawn = rows.count()
    assert 15 <= drawn <= 60, f"the rows in view and a few around them, not {SPANS}: {drawn}"
    assert rows.first.inner_text().startswith("▾") and "gateway" in rows.first.inner_text()
    shots = shots_dir("traces")
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "trace-window-1024.png"), full_page=True)

    # A taller window draws the rows it now has room for.
    page.set_viewport_size({"width": 1024, "height": 1400})
    # A function, not an expression: its polls run in the page, whose CSP refuses eval'ing a string again.
    page.wait_for_function(
        "n => document.querySelectorAll('#trace-waterfall .trace-row').length > n", arg=drawn
    )
    page.set_viewport_size({"width": 1024, "height": 800})
    # Scrolled to the end: the last spans are drawn, the first ones are gone, still a window's worth.
    viewport.evaluate("v => { v.scrollTop = v.scrollHeight; }")
    last = waterfall.locator(f'.trace-row[data-index="{SPANS - 1}"]')
    expect(last).to_be_visible()
    expect(waterfall.locator('.trace-row[data-index="0"]')).to_have_count(0)
    assert rows.count() <= 80

    # The keyboard: Home, End, the arrows; the selected span's details below.
    viewport.focus()
    page.keyboard.press("Home")
    expect(waterfall.locator(".trace-row.selected")).to_have_attribute("data-index", "0")
    expect(page.locator("#span-detail")).to_contain_text("gateway")
    page.keyboard.press("End")
    page.keyboard.press("ArrowUp")
    expect(waterfall.locator(".trace-row.selected")).to_have_attribute("data-index", str(SPANS - 2))
    page.keyboard.press("Home")
    page.keyboard.press("ArrowLeft")  # folds the root: every other span is under it
    folded = waterfall.locator('.trace-row[data-index="0"]')
    expect(folded.locator(".folded-badge")).to_have_text(f"+{SPANS - 1:,}")
    assert rows.count() == 1
    page.keyboard.press("ArrowRight")
    expect(folded.locator(".folded-badge")).to_have_count(0)
    assert rows.count() > 15

    # Find in trace reaches a span far below, unfolding what hides it.
    page.keyboard.press("ArrowLeft")
    find = page.locator("#trace-find")
    find.fill("step 377")
    expect(page.locator("#trace-find-count")).to_have_text("1 span matches")
    find.press("Enter")
    found = waterfall.locator(".trace-row.selected")
    expect(found).to_be_visible()
    expect(found).to_contain_text("step 377")
    expect(page.locator("#trace-find-count")).to_have_text("1 of 1")
    expect(page.locator("#span-detail")).to_contain_text("step 377")

    # Failed spans one after another; the critical path alone.
    failed = (SPANS - len(SERVICES)) // 100  # steps 100, 200, … 1,100 of the 1,197 under the roots
    button = page.locator("#trace-next-error")
    expect(button).to_have_text(f"Next failed span ({failed})")
    button.click()
    expect(waterfall.locator(".trace-row.selected.failed")).to_have_count(1)
    page.check("#trace-critical-only")
    assert rows.count() >= 2 and rows.count() == waterfall.locator(".trace-row.critical").count()
    page.screenshot(path=str(shots / "trace-window-critical-1024.png"), full_page=True)
    assert page.evaluate("window.__csp") == [] and errors == []
    page.close()
