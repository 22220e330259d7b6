"""The resources and endpoints views over windows that cut hours and days: the whole days come from the day
states, the other whole hours from the hour states and the partial edge hours from the minute states — and the figures
still match an exact computation in polars over the raw rows (counts exact, p95 within 1 %)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from stacklens.performance import network
from stacklens.performance.filters import PerfFilters
from tests.stacklens.performance.perf_seed import migrated, seed

ORG, OTHER, PROJECT = 7, 8, 70
WINDOWS = [
    (
        "2026-11-06T12:17:30Z",
        "2026-11-19T09:42:10Z",
    ),  # whole days, whole hours and partial hours on both sides
    ("2026-11-18T03:20:00Z", "2026-11-18T22:05:00Z"),  # whole hours inside one day, no whole day
    ("2026-11-19T10:05:00Z", "2026-11-19T10:55:00Z"),  # inside one hour: minutes alone
]
AROUND_A_LOAD = ("", "")  # the 20 minutes around a page load, inside its hour: minutes alone, with data


@pytest.fixture
def world(settings):
    client = migrated(settings)
    data = seed(client, ORG, PROJECT, loads=500, seed=21)
    seed(client, OTHER, PROJECT, loads=100, seed=22)  # same project id, another organization
    return client, data


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 0.01 * max(abs(b), 1e-9)


def test_whole_hours_and_days_of_a_window() -> None:
    def parts(since: str, until: str) -> list[str]:
        found = PerfFilters.parse(since=since, until=until).whole_hours()
        return [found[k].strftime("%d %H:%M") for k in ("whole_start", "whole_end", "day_start", "day_end")]

    assert parts(*WINDOWS[0]) == ["06 13:00", "19 09:00", "07 00:00", "19 00:00"]
    assert parts(*WINDOWS[1]) == ["18 04:00", "18 22:00", "18 22:00", "18 22:00"]
    assert parts(*WINDOWS[2]) == ["19 10:55", "19 10:55", "19 10:55", "19 10:55"]
    assert parts("2026-11-06T00:00:00Z", "2026-11-08T00:00:00Z") == [
        "06 00:00",
        "08 00:00",
        "06 00:00",
        "08 00:00",
    ]


@pytest.mark.parametrize("window", [*WINDOWS[:2], AROUND_A_LOAD])
def test_resources_and_endpoints_over_cut_windows_match_polars(world, window) -> None:
    client, data = world
    if window == AROUND_A_LOAD:
        load = next(t["timestamp"] for t in data.transactions if 20 <= t["timestamp"].minute < 40)
        start = load.replace(minute=10, second=0, microsecond=0)
        window = (
            start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            start.replace(minute=50).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
    filters = PerfFilters.parse(since=window[0], until=window[1], now=datetime(2026, 11, 20, 12, tzinfo=UTC))
    spans = pl.DataFrame([s for s in data.spans if filters.since <= s["timestamp"] < filters.until])
    scripts = spans.filter(pl.col("op") == "resource.script")
    types = {r["resource_type"]: r for r in network.resource_types(client, ORG, PROJECT, filters)}
    js = types["JavaScript"]
    assert js["requests"] == scripts.height > 0
    assert js["total_bytes"] == scripts["response_content_length"].sum()
    # page loads whose first script request falls in the window (a load's requests are seconds apart)
    first = (
        pl.DataFrame([s for s in data.spans if s["op"] == "resource.script"])
        .group_by("transaction_event_id")
        .agg(pl.col("timestamp").min())
    )
    in_window = first.filter((pl.col("timestamp") >= filters.since) & (pl.col("timestamp") < filters.until))
    assert js["loads"] == in_window.height
    assert _close(js["p95_ms"], scripts["duration_ms"].quantile(0.95, "linear"))
    listing = {r["resource"]: r for r in network.resources(client, ORG, PROJECT, filters)}
    app = scripts.filter(pl.col("description").str.starts_with("https://shop.test/static/app.js"))
    assert listing["https://shop.test/static/app.js"]["requests"] == app.height
    assert _close(
        listing["https://shop.test/static/app.js"]["p95_ms"], app["duration_ms"].quantile(0.95, "linear")
    )
    calls = spans.filter(pl.col("op") == "http.client")
    rows = {(r["source"], r["path"]): r for r in network.endpoints(client, ORG, PROJECT, filters)}
    items = rows[("client", "/api/items/{id}")]
    assert items["calls"] == calls.height
    assert items["s5xx"] == calls.filter(pl.col("status_code") >= 500).height
    assert _close(items["p95_ms"], calls["duration_ms"].quantile(0.95, "linear"))
    days, _ = network.endpoint_detail(client, ORG, PROJECT, filters, "client", "GET", "/api/items/{id}")
    assert sum(d["calls"] for d in days) == calls.height


@pytest.mark.parametrize("browser", ["", "Firefox"])
@pytest.mark.parametrize("window", [*WINDOWS, ("2026-11-06T00:00:00Z", "2026-11-20T00:00:00Z")])
def test_slowest_calls_of_an_endpoint_match_a_scan_of_the_calls(world, window, browser) -> None:
    """The 5 slowest calls come from the days', hours' and edge minutes' own 5 slowest: the same
    calls, in the same order, as sorting every call of the window (whole days only, cut days, one hour)."""
    client, data = world
    filters = PerfFilters.parse(
        since=window[0], until=window[1], browser=browser, now=datetime(2026, 11, 20, 12, tzinfo=UTC)
    )
    browsers = {t["event_id"]: t["browser_name"] for t in data.transactions}
    calls = [
        s
        for s in data.spans
        if s["op"] == "http.client"
        and filters.since <= s["timestamp"] < filters.until
        and browser in ("", browsers[s["transaction_event_id"]])
    ]
    expected = sorted(calls, key=lambda s: (-s["duration_ms"], str(s["transaction_event_id"])))[:5]
    days, slowest = network.endpoint_detail(client, ORG, PROJECT, filters, "client", "GET", "/api/items/{id}")
    assert sum(d["calls"] for d in days) == len(calls)
    assert [(r["duration_ms"], r["event_id"], r["status_code"]) for r in slowest] == [
        (s["duration_ms"], str(s["transaction_event_id"]), s["status_code"]) for s in expected
    ]
    # start times as the warehouse keeps them: milliseconds, UTC
    assert [r["ts"] for r in slowest] == [
        s["timestamp"].replace(tzinfo=None, microsecond=s["timestamp"].microsecond // 1000 * 1000)
        for s in expected
    ]
