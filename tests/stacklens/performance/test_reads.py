"""The performance reads against an exact computation in polars over the raw rows the seed inserted: counts
exact, percentiles within 1 %, the score as stacklens.performance.score computes it per page load, every
filter applied, and another organization's rows (same project id) never counted."""

from __future__ import annotations

import re
from itertools import pairwise

import polars as pl
import pytest

from stacklens.performance import network, reads, waterfall
from stacklens.performance.filters import PerfFilters
from stacklens.performance.recommendations import recommendations
from stacklens.performance.score import MOBILE_OS, page_load_score
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

ORG, OTHER, PROJECT = 5, 6, 50


@pytest.fixture
def world(settings):
    client = migrated(settings)
    data = seed(client, ORG, PROJECT, loads=400, seed=11)
    seed(client, OTHER, PROJECT, loads=150, seed=12)  # same project id, another organization
    return client, data


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9)


def _loads(data, filters: PerfFilters) -> pl.DataFrame:
    rows = [
        t
        for t in data.transactions
        if t["op"] == "pageload"
        and filters.since <= t["timestamp"] < filters.until
        and (not filters.environment or t["environment"] == filters.environment)
        and (not filters.release or t["release"] == filters.release)
        and (not filters.browser or t["browser_name"] == filters.browser)
    ]
    dcl = {}
    for s in data.spans:
        if s["op"] == "browser.domContentLoadedEvent":
            dcl[s["transaction_event_id"]] = s["timestamp"].timestamp() * 1000 + s["duration_ms"]
    return pl.DataFrame(
        [
            {
                "page": t["page"],
                "load": t["duration_ms"],
                "lcp": t["measurements"].get("lcp"),
                "inp": t["measurements"].get("inp"),
                "ttfb": t["measurements"].get("ttfb"),
                "dom": dcl[t["event_id"]] - round(t["timestamp"].timestamp() * 1000, 0),
                "score": page_load_score(t["measurements"], t["os_name"] in MOBILE_OS),
            }
            for t in rows
        ]
    )


@pytest.mark.parametrize(
    "dims",
    [
        {},
        {"environment": "production"},
        {"browser": "Safari"},
        {"release": "shop@1.1.0", "browser": "Chrome"},
    ],
)
def test_pages_match_polars(world, dims) -> None:
    client, data = world
    filters = PerfFilters.parse(since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z", **dims)
    total, rows = reads.pages(client, ORG, PROJECT, filters)
    frame = _loads(data, filters)
    assert total is not None and total["views"] == frame.height
    expected = frame.group_by("page").agg(
        pl.len().alias("views"),
        pl.col("load").quantile(0.75, "linear").alias("load_p75"),
        pl.col("lcp").quantile(0.75, "linear").alias("lcp_p75"),
        pl.col("lcp").count().alias("lcp_n"),
        pl.col("inp").count().alias("inp_n"),
        pl.col("ttfb").quantile(0.75, "linear").alias("ttfb_p75"),
        pl.col("dom").mean().alias("dom_avg"),
        pl.col("score").mean().alias("score"),
    )
    by_page = {r["page"]: r for r in rows}
    assert set(by_page) == set(expected["page"].to_list())
    for row in expected.iter_rows(named=True):
        got = by_page[row["page"]]
        assert got["views"] == row["views"] and got["lcp_n"] == row["lcp_n"] and got["inp_n"] == row["inp_n"]
        for key in ("load_p75", "lcp_p75", "ttfb_p75", "dom_avg", "score"):
            assert _close(got[key], row[key]), (row["page"], key, got[key], row[key])
    assert _close(total["score"], frame["score"].mean())
    if dims.get("browser") == "Safari":
        assert total["lcp_n"] == 0 and total["lcp_p75"] is None and total["score"] is not None


def test_opportunity_sums_to_the_gap_to_100(world) -> None:
    client, _ = world
    total, rows = reads.pages(client, ORG, PROJECT, PerfFilters.parse(range="14d", now=NOW))
    assert total is not None
    assert _close(sum(r["opportunity"] for r in rows), 100 - total["score"])


def test_weekly_and_releases_match_polars(world) -> None:
    client, data = world
    filters = PerfFilters.parse(since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z")
    loads = [t for t in data.transactions if t["op"] == "pageload"]
    frame = pl.DataFrame(
        [{"ts": t["timestamp"], "load": t["duration_ms"], "release": t["release"]} for t in loads]
    )
    weeks = (
        frame.with_columns(pl.col("ts").dt.truncate("1w").dt.date().alias("week"))
        .group_by("week")
        .agg(pl.len().alias("views"), pl.col("load").quantile(0.75, "linear").alias("p75"))
    )
    got = {r["week_start"]: r for r in reads.weekly(client, ORG, PROJECT, filters)}
    for row in weeks.iter_rows(named=True):
        assert got[row["week"]]["views"] == row["views"] and _close(got[row["week"]]["load_p75"], row["p75"])
    ordered = sorted(got.values(), key=lambda r: r["week_start"])
    for before, after in pairwise(ordered):
        assert after["prev_views"] == before["views"]
        assert _close(
            after["load_change_pct"], 100 * (after["load_p75"] - before["load_p75"]) / before["load_p75"]
        )
    per_release = frame.group_by("release").agg(
        pl.len().alias("views"), pl.col("load").quantile(0.75, "linear").alias("p75")
    )
    releases = {r["release"]: r for r in reads.releases(client, ORG, PROJECT, filters)}
    for row in per_release.iter_rows(named=True):
        assert releases[row["release"]]["views"] == row["views"] and _close(
            releases[row["release"]]["load_p75"], row["p75"]
        )
    # The releases view's API error rate is error_pct's definition over the browser's calls of the release's page
    # loads: calls answered 400-599 over all calls, exact.
    calls = pl.DataFrame(
        [
            {"release": s["release"], "status": s["status_code"]}
            for s in data.spans
            if s["op"] == "http.client"
        ]
    )
    per_release_calls = calls.group_by("release").agg(
        pl.len().alias("calls"), pl.col("status").is_between(400, 599).sum().alias("failed")
    )
    for row in per_release_calls.iter_rows(named=True):
        got = releases[row["release"]]
        assert got["api_calls"] == row["calls"]
        assert got["api_error_pct"] == pytest.approx(100 * row["failed"] / row["calls"], rel=1e-12)
    assert releases["shop@1.1.0"]["previous_release"] == "shop@1.0.0"
    assert releases["shop@1.1.0"]["regression"].startswith("shop@1.1.0: load time p75 ")


def test_resources_and_endpoints_match_polars(world) -> None:
    client, data = world
    filters = PerfFilters.parse(
        since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z", environment="production"
    )
    spans = pl.DataFrame(
        [
            s
            for s in data.spans
            if s["environment"] == "production" and filters.since <= s["timestamp"] < filters.until
        ]
    )
    types = {r["resource_type"]: r for r in network.resource_types(client, ORG, PROJECT, filters)}
    scripts = spans.filter(pl.col("op") == "resource.script")
    assert types["JavaScript"]["requests"] == scripts.height
    assert types["JavaScript"]["total_bytes"] == scripts["response_content_length"].sum()
    assert _close(types["JavaScript"]["p95_ms"], scripts["duration_ms"].quantile(0.95, "linear"))
    listing = {r["resource"]: r for r in network.resources(client, ORG, PROJECT, filters)}
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
    calls = spans.filter(pl.col("op") == "http.client")
    rows = {(r["source"], r["path"]): r for r in network.endpoints(client, ORG, PROJECT, filters)}
    items = rows[("client", "/api/items/{id}")]  # /api/items/12 and /api/items/99 are one row
    assert items["calls"] == calls.height
    assert items["s5xx"] == calls.filter(pl.col("status_code") >= 500).height
    assert (
        items["s4xx"] == calls.filter((pl.col("status_code") >= 400) & (pl.col("status_code") < 500)).height
    )
    assert _close(items["p95_ms"], calls["duration_ms"].quantile(0.95, "linear"))
    server = [
        t
        for t in data.transactions
        if t["op"] == "http.server"
        and t["environment"] == "production"
        and filters.since <= t["timestamp"] < filters.until
    ]
    assert sum(r["calls"] for r in rows.values() if r["source"] == "server") == len(server)


def test_recommendations_one_per_subject(world) -> None:
    client, _ = world
    recs = recommendations(client, ORG, PROJECT, PerfFilters.parse(range="14d", now=NOW))
    subjects = [r["subject"] for r in recs]
    assert len(subjects) == len(set(subjects))  # every rule of a subject on its one row
    assert all(r["rules"][0] == r["rule"] and len(set(r["rules"])) == len(r["rules"]) for r in recs)
    rules = {rule for r in recs for rule in r["rules"]}
    assert {
        "render_blocking_script",
        "oversized_image",
        "large_api_payload",
        "failing_endpoint",
        "slow_endpoint",
    } <= rules
    hero = [r for r in recs if r["subject"] == "https://shop.test/img/hero.png"]
    assert (
        len(hero) == 1
        and hero[0]["rules"] == ["oversized_image"]  # a big PNG: told once, its format advice included
        and hero[0]["pages"] == ["/", "/checkout", "/products/{id}"]
        and hero[0]["estimated_saving"]
    )
    assert "KiB" in hero[0]["message"] and not re.search(r"\de[+-]\d", hero[0]["message"])
    assert not any(r["old_release"] for r in recs)  # one URL set in both releases: nothing is old


def test_waterfall_of_one_page_load(world) -> None:
    client, data = world
    tx = next(t for t in data.transactions if t["op"] == "pageload" and t["browser_name"] == "Chrome")
    found = waterfall.waterfall(client, ORG, PROJECT, str(tx["event_id"]))
    assert found is not None
    spans = [s for s in data.spans if s["transaction_event_id"] == tx["event_id"]]
    assert len(found["spans"]) == len([s for s in spans if not s["op"].startswith("browser")])
    assert [p["phase"] for p in found["phases"]] == ["TTFB", "DOM ready"]
    assert {m["name"] for m in found["markers"]} >= {"FCP", "LCP"}
    assert any(s["render_blocking"] == "blocking" for s in found["spans"])
    assert waterfall.waterfall(client, OTHER, PROJECT, str(tx["event_id"])) is None
    assert waterfall.waterfall(client, ORG, PROJECT, "not-a-uuid") is None
