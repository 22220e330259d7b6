"""DOM ready in `pageload_facts` (what the page-load states merge) reads the DOMContentLoaded span as every
@sentry/browser version names it."""

from __future__ import annotations

import random
import statistics
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from pipelines.embedded import materialize_now
from stacklens.demo import browser
from stacklens.ingest.service import Attribution, ingest_batch

ORG, PROJECT, APP_KEY = 8, 80, "stacklens_app_browser_ops"
# (DOMContentLoaded op, its description or None to keep the page URL, load-event op) per SDK generation.
NAMING = {
    "v7": ("browser", "domContentLoadedEvent", "browser", "loadEvent"),
    "v8": ("browser.domContentLoadedEvent", None, "browser.loadEvent", None),
    "v11": ("browser.dom_content_loaded_event", None, "browser.load_event", None),
}


def page_load(rng: random.Random, version: str, at: datetime) -> tuple[dict[str, Any], float]:
    """A demo page load renamed as ``version`` sends it, on page ``/<version>``; and its DOM ready in ms."""
    release = browser.ReleaseShape("shop@3.0.0", 300_000, True, 1.0)
    payload = browser.pageload(rng, "https://shop.test", release, "production", at, None, False)
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
