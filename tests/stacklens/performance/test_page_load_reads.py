"""The page-load reads against an exact computation in polars over the raw rows the seed inserted: counts
exact, percentiles within 1 %, the score as stacklens.performance.score computes it per page load, every
filter applied, and another organization's rows (same project id) never counted."""

from __future__ import annotations

from itertools import pairwise

import polars as pl
import pytest

from stacklens.performance import page_load_reads
from stacklens.performance.score import MOBILE_OS, page_load_score
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance import read_worlds as w
from tests.stacklens.performance.perf_seed import NOW, page_loads_in
from tests.stacklens.performance.read_worlds import ORG, PROJECT


def _loads(data, filters: ViewFilters) -> pl.DataFrame:
    rows = page_loads_in(data, filters)
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
def test_pages_match_polars(reads_world, dims) -> None:
    client, data = reads_world
    filters = ViewFilters.parse(since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z", **dims)
    total, rows = page_load_reads.pages(client, ORG, PROJECT, filters)
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
            assert w.close(got[key], row[key]), (row["page"], key, got[key], row[key])
    assert w.close(total["score"], frame["score"].mean())
    if dims.get("browser") == "Safari":
        assert total["lcp_n"] == 0 and total["lcp_p75"] is None and total["score"] is not None


def test_opportunity_sums_to_the_gap_to_100(reads_world) -> None:
    client, _ = reads_world
    total, rows = page_load_reads.pages(client, ORG, PROJECT, ViewFilters.parse(range="14d", now=NOW))
    assert total is not None
    assert w.close(sum(r["opportunity"] for r in rows), 100 - total["score"])


def test_weekly_and_releases_match_polars(reads_world) -> None:
    client, data = reads_world
    filters = ViewFilters.parse(since="2026-11-06T12:00:00Z", until="2026-11-20T12:00:00Z")
    loads = [t for t in data.transactions if t["op"] == "pageload"]
    frame = pl.DataFrame(
        [{"ts": t["timestamp"], "load": t["duration_ms"], "release": t["release"]} for t in loads]
    )
    weeks = (
        frame.with_columns(pl.col("ts").dt.truncate("1w").dt.date().alias("week"))
        .group_by("week")
        .agg(pl.len().alias("views"), pl.col("load").quantile(0.75, "linear").alias("p75"))
    )
    got = {r["week_start"]: r for r in page_load_reads.weekly(client, ORG, PROJECT, filters)}
    for row in weeks.iter_rows(named=True):
        assert got[row["week"]]["views"] == row["views"] and w.close(got[row["week"]]["load_p75"], row["p75"])
    ordered = sorted(got.values(), key=lambda r: r["week_start"])
    for before, after in pairwise(ordered):
        assert after["prev_views"] == before["views"]
        assert w.close(
            after["load_change_pct"], 100 * (after["load_p75"] - before["load_p75"]) / before["load_p75"]
        )
    per_release = frame.group_by("release").agg(
        pl.len().alias("views"), pl.col("load").quantile(0.75, "linear").alias("p75")
    )
    releases = {r["release"]: r for r in page_load_reads.releases(client, ORG, PROJECT, filters)}
    for row in per_release.iter_rows(named=True):
        assert releases[row["release"]]["views"] == row["views"] and w.close(
            releases[row["release"]]["load_p75"], row["p75"]
        )
    # The releases view's API error rate is error_pct's definition over the browser's calls of the release's
    # page loads: calls answered 400-599 over all calls, exact.
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
        release = releases[row["release"]]
        assert release["api_calls"] == row["calls"]
        assert release["api_error_pct"] == pytest.approx(100 * row["failed"] / row["calls"], rel=1e-12)
    assert releases["shop@1.1.0"]["previous_release"] == "shop@1.0.0"
    assert releases["shop@1.1.0"]["regression"].startswith("shop@1.1.0: load time p75 ")
