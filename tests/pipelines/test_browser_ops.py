"""DOM ready in `pageload_facts` (what the page-load states merge) reads the DOMContentLoaded span as every
@sentry/browser version names it."""

from __future__ import annotations

import random
import statistics
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from demo import browser, browser_pageloads
from pipelines.embedded import materialize_now
from stacklens.ingest.service import Attribution, ingest_batch

ORG, PROJECT, APP_KEY = 8, 80, "stacklens_app_browser_ops"
# (DOMContentLoaded op, its description or None to keep the page URL, load-event op) per SDK generation.
NAMING = {
    "v7": ("browser", "domContentLoadedEvent", "browser", "loadEvent"),
    "v8": ("browser.domContentLoadedEvent", None, "browser.loadEvent", None),
    "v11": ("browser.dom_content_loaded_event", None, "browser.load_event", None),
}


@pytest.fixture(autouse=True)
def _control_store(settings) -> None:
    """The performance job's INP step reads each project's own script hosts from the control store."""
    from stacklens.control.db import migrate_control_store

    migrate_control_store(settings)


def page_load(rng: random.Random, version: str, at: datetime) -> tuple[dict[str, Any], float]:
    """A demo page load renamed as ``version`` sends it, on page ``/<version>``; and its DOM ready in ms."""
    release = browser.ReleaseShape("shop@3.0.0", 300_000, True, 1.0)
    payload = browser_pageloads.pageload(rng, "https://shop.test", release, "production", at, None, False)
    dcl_op, dcl_desc, load_op, load_desc = NAMING[version]
    dom_ready = None
    for span in payload["spans"]:
        if span["op"] == "browser.domContentLoadedEvent":
            span["op"], span["description"] = dcl_op, dcl_desc or span["description"]
            dom_ready = (span["timestamp"] - payload["start_timestamp"]) * 1000
        elif span["op"] == "browser.loadEvent":
            span["op"], span["description"] = load_op, load_desc or span["description"]
        span.get("data", {}).pop("sentry.op", None)
    payload["transaction"] = f"/{version}"
    payload["request"]["url"] = f"https://shop.test/{version}"
    assert dom_ready is not None
    return payload, dom_ready


def test_dom_ready_for_every_sdk_generation(client, instance, settings, defs) -> None:
    rng = random.Random(5)
    at = datetime.now(UTC) - timedelta(hours=1)
    expected: dict[str, list[float]] = {v: [] for v in NAMING}
    lines = []
    for version in NAMING:
        for k in range(3):
            payload, dom_ready = page_load(rng, version, at + timedelta(seconds=k))
            expected[version].append(dom_ready)
            lines.append(
                orjson.dumps(
                    {"v": 1, "type": "transaction", "ts": "2026-01-01T00:00:00Z", "payload": payload}
                )
            )
    result = ingest_batch(
        settings,
        ORG,
        b"\n".join(lines),
        header_app_key=APP_KEY,
        idempotency_key=None,
        resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
        take_events=lambda _n: None,
    )
    assert result.accepted == 9 and not result.rejected, result.rejected
    outcomes = materialize_now(defs, instance, ["pageload_facts"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    rows = client.query(
        "SELECT page, count(), quantileExactInclusive(0.5)(dom_ready), avg(dom_ready),"
        " quantileExactInclusive(0.5)(load_ms) FROM pageload_facts FINAL WHERE project_id = {p:UInt64} GROUP BY page",
        parameters={"p": PROJECT},
    ).result_rows
    got = {page: (views, p50, avg, load) for page, views, p50, avg, load in rows}
    assert set(got) == {f"/{v}" for v in NAMING}
    for version, values in expected.items():
        views, p50, avg, load = got[f"/{version}"]
        assert views == 3
        # Milliseconds are stored at 1 ms precision for span starts: within 2 ms of the payload's figure.
        assert p50 == pytest.approx(statistics.median(values), abs=2), version
        assert avg == pytest.approx(statistics.mean(values), abs=2), version
        assert p50 < load  # the load event is later and never taken for DOM ready


def inp_span(trace_id: str, span_id: str, at: datetime, inp_ms: int) -> dict[str, Any]:
    """A standalone INP span as @sentry/browser 11 sends it (a v2 span container), on the shop's home page."""
    start = at.timestamp()
    return {
        "version": 2,
        "items": [
            {
                "name": "body > button#recommend",
                "span_id": span_id,
                "trace_id": trace_id,
                "start_timestamp": start,
                "end_timestamp": start + inp_ms / 1000,
                "attributes": {
                    "sentry.op": {"value": "ui.interaction.click", "type": "string"},
                    "browser.web_vital.inp.value": {"value": inp_ms, "type": "integer"},
                    "sentry.transaction": {"value": "/inp", "type": "string"},
                    "sentry.release": {"value": "shop@3.0.0", "type": "string"},
                },
            }
        ],
    }


def land(settings, lines: list[dict[str, Any]]) -> None:
    result = ingest_batch(
        settings,
        ORG,
        b"\n".join(orjson.dumps({"v": 1, "ts": "2026-01-01T00:00:00Z", **line}) for line in lines),
        header_app_key=APP_KEY,
        idempotency_key=None,
        resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
        take_events=lambda _n: None,
    )
    assert result.accepted == len(lines) and not result.rejected, result.rejected


def test_inp_of_standalone_interaction_spans_joins_its_page_load(client, instance, settings, defs) -> None:
    """@sentry/browser 8+ reports INP as a span of its own when the page is hidden, not as a measurement of
    the page load; the page load's facts take it from its trace, also when it lands in the next hour after
    those facts were built."""
    rng = random.Random(9)
    hour = (datetime.now(UTC) - timedelta(hours=3)).replace(minute=0, second=0, microsecond=0)
    loads = []
    for k, at in enumerate((hour + timedelta(minutes=10), hour + timedelta(minutes=59, seconds=50))):
        payload, _ = page_load(rng, "v11", at)
        payload["transaction"], payload["request"]["url"] = "/inp", "https://shop.test/inp"
        payload.get("measurements", {}).pop("inp", None)
        payload["contexts"]["trace"]["trace_id"] = f"{k + 1:032x}"
        loads.append(payload)
    own = page_load(rng, "v11", hour + timedelta(minutes=20))[0]
    own["transaction"], own["request"]["url"] = "/inp", "https://shop.test/inp"
    own["measurements"]["inp"] = {"value": 88.0, "unit": "millisecond"}
    own["contexts"]["trace"]["trace_id"] = f"{3:032x}"
    land(settings, [{"type": "transaction", "payload": p} for p in [*loads, own]])
    outcomes = materialize_now(defs, instance, ["pageload_facts"])
    assert all(o.success for o in outcomes), [o.error for o in outcomes]

    def inp_by_trace() -> dict[int, float | None]:
        rows = client.query(
            "SELECT t.trace_id, f.inp FROM pageload_facts AS f FINAL"
            " INNER JOIN transactions AS t ON t.event_id = f.event_id"
            " WHERE f.project_id = {p:UInt64} AND f.page = '/inp'",
            parameters={"p": PROJECT},
        ).result_rows
        return {int(trace, 16): inp for trace, inp in rows}

    assert inp_by_trace() == {1: None, 2: None, 3: 88.0}

    # The interactions land later. Those of the second page load land in the next hour, with nothing else of
    # its hour arriving: their arrival marks that hour too, so a tick builds its facts again. Its INP is its
    # worst interaction.
    def hour_received(at: datetime) -> datetime:
        return client.query(
            "SELECT max(received) FROM raw_arrival_hours WHERE source = 'transactions'"
            " AND project_id = {p:UInt64} AND hour = {h:DateTime('UTC')}",
            parameters={"p": PROJECT, "h": at},
        ).result_rows[0][0]

    before = hour_received(hour)
    land(
        settings,
        [
            {
                "type": "span",
                "payload": inp_span(f"{2:032x}", "b1", hour + timedelta(minutes=60, seconds=5), 216),
            },
            {
                "type": "span",
                "payload": inp_span(f"{2:032x}", "b2", hour + timedelta(minutes=60, seconds=9), 40),
            },
        ],
    )
    assert hour_received(hour) > before, "the page load's hour is marked by an interaction of the next hour"
    outcomes = materialize_now(defs, instance, ["pageload_facts"])
    assert all(o.success for o in outcomes), [o.error for o in outcomes]
    assert inp_by_trace() == {1: None, 2: 216.0, 3: 88.0}
    land(
        settings,
        [
            {"type": "span", "payload": inp_span(f"{1:032x}", "a1", hour + timedelta(minutes=12), 304)},
            {"type": "span", "payload": inp_span(f"{3:032x}", "c1", hour + timedelta(minutes=21), 500)},
        ],
    )
    outcomes = materialize_now(defs, instance, ["pageload_facts"])
    assert all(o.success for o in outcomes), [o.error for o in outcomes]
    assert inp_by_trace() == {1: 304.0, 2: 216.0, 3: 88.0}, "a page load's own measurement wins"
    views = client.query(
        "SELECT sum(views) FROM pageload_periods WHERE project_id = {p:UInt64} AND page = '/inp'"
        " AND grain = 'hour'",
        parameters={"p": PROJECT},
    ).result_rows
    assert views == [(3,)], "interactions are not page loads"
