"""The API endpoint reads against an exact computation in polars over the raw rows the seed inserted:
client calls with ids folded into one endpoint, calls and status classes exact, p95 within 1 %, server
transactions counted apart, the days of one endpoint and its slowest calls — over two weeks and over
windows that cut hours and days (the whole days from the day states, the other whole hours from the hour
states, the partial edge hours from the minute states), another organization's rows (same project id) never
counted."""

from __future__ import annotations

import polars as pl
import pytest

from stacklens.performance import endpoint_reads
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance import read_worlds as w


def test_endpoints_match_polars(reads_world) -> None:
    client, data = reads_world
    filters = ViewFilters.parse(
        since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z", environment="production"
    )
    calls = w.window_spans(data, filters).filter(pl.col("op") == "http.client")
    rows = {(r["source"], r["path"]): r for r in endpoint_reads.endpoints(client, w.ORG, w.PROJECT, filters)}
    items = rows[("client", "/api/items/{id}")]  # /api/items/12 and /api/items/99 are one row
    assert items["calls"] == calls.height
    assert items["s5xx"] == calls.filter(pl.col("status_code") >= 500).height
    assert (
        items["s4xx"] == calls.filter((pl.col("status_code") >= 400) & (pl.col("status_code") < 500)).height
    )
    assert w.close(items["p95_ms"], calls["duration_ms"].quantile(0.95, "linear"))
    server = [
        t
        for t in data.transactions
        if t["op"] == "http.server"
        and t["environment"] == "production"
        and filters.since <= t["timestamp"] < filters.until
    ]
    assert sum(r["calls"] for r in rows.values() if r["source"] == "server") == len(server)


@pytest.mark.parametrize("window", w.CUT_CASES)
def test_endpoints_over_cut_windows_match_polars(cut_world, window) -> None:
    client, data = cut_world
    filters, calls = w.cut_spans(data, window, "http.client")
    rows = {
        (r["source"], r["path"]): r
        for r in endpoint_reads.endpoints(client, w.CUT_ORG, w.CUT_PROJECT, filters)
    }
    items = rows[("client", "/api/items/{id}")]
    assert items["calls"] == calls.height
    assert items["s5xx"] == calls.filter(pl.col("status_code") >= 500).height
    assert w.close(items["p95_ms"], calls["duration_ms"].quantile(0.95, "linear"))
    days, _ = endpoint_reads.endpoint_detail(
        client, w.CUT_ORG, w.CUT_PROJECT, filters, "client", "GET", "/api/items/{id}"
    )
    assert sum(d["calls"] for d in days) == calls.height


@pytest.mark.parametrize("browser", ["", "Firefox"])
@pytest.mark.parametrize("window", [*w.WINDOWS, ("2026-11-06T00:00:00Z", "2026-11-20T00:00:00Z")])
def test_slowest_calls_of_an_endpoint_match_a_scan_of_the_calls(cut_world, window, browser) -> None:
    """The 5 slowest calls come from the days', hours' and edge minutes' own 5 slowest: the same
    calls, in the same order, as sorting every call of the window (whole days only, cut days, one hour)."""
    client, data = cut_world
    filters = w.cut_filters(data, window, browser)
    browsers = {t["event_id"]: t["browser_name"] for t in data.transactions}
    calls = [
        s
        for s in data.spans
        if s["op"] == "http.client"
        and filters.since <= s["timestamp"] < filters.until
        and browser in ("", browsers[s["transaction_event_id"]])
    ]
    expected = sorted(calls, key=lambda s: (-s["duration_ms"], str(s["transaction_event_id"])))[:5]
    days, slowest = endpoint_reads.endpoint_detail(
        client, w.CUT_ORG, w.CUT_PROJECT, filters, "client", "GET", "/api/items/{id}"
    )
    assert sum(d["calls"] for d in days) == len(calls)
    assert [(r["duration_ms"], r["event_id"], r["status_code"]) for r in slowest] == [
        (s["duration_ms"], str(s["transaction_event_id"]), s["status_code"]) for s in expected
    ]
    # start times as the warehouse keeps them: milliseconds, UTC
    assert [r["ts"] for r in slowest] == [
        s["timestamp"].replace(tzinfo=None, microsecond=s["timestamp"].microsecond // 1000 * 1000)
        for s in expected
    ]


def test_a_one_call_endpoint_reads_its_call_as_p95() -> None:
    # The histogram answers the centre of the call's 1 % bucket: 4.3 ms for a call of 4.4 ms, a p95 below the
    # average beside it. One call's percentile is the call.
    raw = {
        "source": "server",
        "method": "GET",
        "path": "/api/ping",
        "calls": 1,
        "avg_ms": 4.4,
        "p95_ms": 4.3,
        "s2xx": 1,
        "s3xx": 0,
        "s4xx": 0,
        "s5xx": 0,
        "avg_bytes": None,
        "max_per_load": 0,
        "loads": 0,
        "pages": [],
    }
    row = endpoint_reads._endpoint_row(raw)
    assert row["p95_ms"] == row["avg_ms"] == 4.4
    assert (
        endpoint_reads._endpoint_row({**raw, "calls": 2, "avg_ms": 4.0})["p95_ms"] == 4.3
    )  # two: the histogram's
