"""The resource reads against an exact computation in polars over the raw rows the seed inserted: per type and
per resource, counts and bytes exact, p95 within 1 %, query strings folded into one resource, render-blocking
status and impact, third parties told apart — over two weeks and over windows that cut hours and days (the
whole days from the day states, the other whole hours from the hour states, the partial edge hours from the
minute states), another organization's rows (same project id) never counted."""

from __future__ import annotations

import polars as pl
import pytest

from stacklens.performance import resource_reads
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance import read_worlds as w


def test_resources_match_polars(reads_world) -> None:
    client, data = reads_world
    filters = ViewFilters.parse(
        since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z", environment="production"
    )
    spans = w.window_spans(data, filters)
    types = {r["resource_type"]: r for r in resource_reads.resource_types(client, w.ORG, w.PROJECT, filters)}
    scripts = spans.filter(pl.col("op") == "resource.script")
    assert types["JavaScript"]["requests"] == scripts.height
    assert types["JavaScript"]["total_bytes"] == scripts["response_content_length"].sum()
    assert w.close(types["JavaScript"]["p95_ms"], scripts["duration_ms"].quantile(0.95, "linear"))
    listing = {r["resource"]: r for r in resource_reads.resources(client, w.ORG, w.PROJECT, filters)}
    app = listing["https://shop.test/static/app.js"]  # query strings folded into one resource
    app_rows = scripts.filter(pl.col("description").str.starts_with("https://shop.test/static/app.js"))
    assert app["requests"] == app_rows.height
    assert app["unknown_loads"] == app_rows.filter(pl.col("render_blocking_status") == "").height > 0
    assert (
        app["render_blocking"] == "blocking"
        and app["impact"] in ("High", "Medium", "Low")
        and app["impact_reason"]
    )
    assert listing["https://cdn.tracker.test/t.js"]["third_party"] and not app["third_party"]


@pytest.mark.parametrize("window", w.CUT_CASES)
def test_resources_over_cut_windows_match_polars(cut_world, window) -> None:
    client, data = cut_world
    filters, scripts = w.cut_spans(data, window, "resource.script")
    types = {
        r["resource_type"]: r
        for r in resource_reads.resource_types(client, w.CUT_ORG, w.CUT_PROJECT, filters)
    }
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
    assert w.close(js["p95_ms"], scripts["duration_ms"].quantile(0.95, "linear"))
    listing = {r["resource"]: r for r in resource_reads.resources(client, w.CUT_ORG, w.CUT_PROJECT, filters)}
    app = scripts.filter(pl.col("description").str.starts_with("https://shop.test/static/app.js"))
    assert listing["https://shop.test/static/app.js"]["requests"] == app.height
    assert w.close(
        listing["https://shop.test/static/app.js"]["p95_ms"], app["duration_ms"].quantile(0.95, "linear")
    )
