"""The page-load views over windows that cut hours and days: the whole days and blocks of days and the
other whole hours and the minutes of the partial edge hours come from `pageload_periods` — and the figures
still match an exact computation in polars / Python over the raw rows (counts exact, percentiles within 1
%)."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime

import polars as pl
import pytest

from pipelines.assets.performance import TABLES
from stacklens.performance import page_load_reads
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import reset_clients
from stacklens.warehouse.queries import load_query
from tests.conftest import make_settings
from tests.stacklens.performance.perf_seed import migrated, page_loads_in, seed

ORG, OTHER, PROJECT = 9, 10, 90
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WINDOWS = [
    (
        "2026-11-06T12:17:30Z",
        "2026-11-19T09:42:10Z",
    ),  # whole days, whole hours and partial hours on both sides
    ("2026-11-18T03:20:00Z", "2026-11-18T22:05:00Z"),  # whole hours inside one day, no whole day
    ("2026-11-07T00:00:00Z", "2026-11-19T00:00:00Z"),  # whole days only
]
DIMS = [{}, {"browser": "Chrome"}, {"environment": "staging", "release": "shop@1.1.0"}]


@pytest.fixture(scope="module")
def world(tmp_path_factory, warehouse_url):
    """One seeded warehouse database for the module (read-only tests)."""
    settings = make_settings(tmp_path_factory.mktemp("pageload-states"), warehouse_url)
    client = migrated(settings)
    data = seed(client, ORG, PROJECT, loads=600, seed=31, facts=False)
    seed(client, OTHER, PROJECT, loads=100, seed=32)  # same project id, another organization
    yield client, data
    reset_clients()


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None and (b is None or math.isnan(b))
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9)


def _frame(data, filters: ViewFilters, page: str = "") -> pl.DataFrame:
    dcl = {
        s["transaction_event_id"]: s["timestamp"].timestamp() * 1000 + s["duration_ms"]
        for s in data.spans
        if s["op"] == "browser.domContentLoadedEvent"
    }
    rows = [
        {
            "event_id": str(t["event_id"]),
            "ts": t["timestamp"],
            "day": t["timestamp"].date(),
            "page": t["page"],
            "environment": t["environment"],
            "release": t["release"],
            "browser": t["browser_name"],
            "load": float(t["duration_ms"]),
            "dom": dcl[t["event_id"]] - round(t["timestamp"].timestamp() * 1000, 0),
            **{k: t["measurements"].get(k) for k in ("ttfb", "lcp", "inp", "cls", "fcp")},
        }
        for t in page_loads_in(data, filters, page)
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


def _p75(frame: pl.DataFrame, column: str) -> float | None:
    values = frame[column].drop_nulls()
    return float(values.quantile(0.75, "linear")) if len(values) else None


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("dims", DIMS)
def test_pages_and_daily_over_cut_windows_match_polars(world, window, dims) -> None:
    client, data = world
    filters = ViewFilters.parse(since=window[0], until=window[1], now=NOW, **dims)
    frame = _frame(data, filters)
    assert frame.height > 0
    total, rows = page_load_reads.pages(client, ORG, PROJECT, filters)
    assert total is not None and total["views"] == frame.height
    by_key = dict(total)  # read by metric name
    for metric in ("ttfb", "lcp", "inp", "cls", "fcp"):
        assert by_key[f"{metric}_n"] == frame[metric].drop_nulls().len()
        assert _close(by_key[f"{metric}_p75"], _p75(frame, metric)), metric
    assert _close(total["load_p75"], _p75(frame, "load")) and _close(total["load_avg"], frame["load"].mean())
    by_page = {r["page"]: r for r in rows}
    for (page,), group in frame.group_by("page"):
        assert by_page[page]["views"] == group.height
        assert _close(by_page[page]["load_p75"], _p75(group, "load"))
        assert _close(by_page[page]["lcp_p75"], _p75(group, "lcp"))
        assert _close(by_page[page]["dom_avg"], group["dom"].mean())
    days = {r["day"]: dict(r) for r in page_load_reads.daily(client, ORG, PROJECT, filters)}
    assert set(days) == set(frame["day"].to_list())
    for (day,), group in frame.group_by("day"):
        assert days[day]["views"] == group.height and days[day]["cls_n"] == group["cls"].drop_nulls().len()
        for metric in ("load", "ttfb", "dom", "cls", "inp"):
            assert _close(days[day][f"{metric}_p75"], _p75(group, metric)), (day, metric)


@pytest.mark.parametrize("dims", DIMS)
def test_one_read_views_equal_their_separate_reads(world, dims) -> None:
    """The overview, trends and sparklines read the window once; their figures are those of the separate
    reads."""
    client, _ = world
    filters = ViewFilters.parse(since=WINDOWS[0][0], until=WINDOWS[0][1], now=NOW, **dims)
    total, rows, days = page_load_reads.overview(client, ORG, PROJECT, filters)
    assert total is not None and days
    assert _same(
        [total, *rows],
        [
            page_load_reads.pages(client, ORG, PROJECT, filters)[0],
            *page_load_reads.pages(client, ORG, PROJECT, filters)[1],
        ],
    )
    assert _same(days, page_load_reads.daily(client, ORG, PROJECT, filters))
    weeks, page_weeks = page_load_reads.trends(client, ORG, PROJECT, filters)
    assert page_weeks and _same(weeks, page_load_reads.weekly(client, ORG, PROJECT, filters))
    assert _same(page_weeks, page_load_reads.weekly(client, ORG, PROJECT, filters, by_page=True))
    days, weeks, dist, picked = page_load_reads.page_detail(client, ORG, PROJECT, filters, "/checkout")
    assert days and _same(days, page_load_reads.daily(client, ORG, PROJECT, filters, "/checkout"))
    assert _same(weeks, page_load_reads.weekly(client, ORG, PROJECT, filters, "/checkout"))
    assert dist == page_load_reads.distribution(client, ORG, PROJECT, filters, "/checkout") and dist["cls"]
    assert picked and picked == page_load_reads.samples(client, ORG, PROJECT, filters, "/checkout")
    last_week = ViewFilters.parse(since="2026-11-12T09:42:10Z", until=WINDOWS[0][1], now=NOW, **dims)
    spark = page_load_reads.sparklines(client, ORG, PROJECT, filters)
    for row in page_load_reads.daily(client, ORG, PROJECT, last_week, by_page=True):
        day = (row["day"] - last_week.since.date()).days
        assert _same([spark[row["key"]][day]], [row["load_p75"]])


def _same(got: list, want: list) -> bool:
    """Equal rows, floats up to the order the engine added them in."""

    def equal(a: object, b: object) -> bool:
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return a == b

    return len(got) == len(want) and all(equal(a, b) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("window", WINDOWS[:2])
def test_page_detail_weekly_releases_and_facets_over_cut_windows(world, window) -> None:
    client, data = world
    filters = ViewFilters.parse(since=window[0], until=window[1], now=NOW)
    page = "/checkout"
    frame = _frame(data, filters, page)
    weeks = {r["week_start"]: r for r in page_load_reads.weekly(client, ORG, PROJECT, filters, page)}
    weekly = frame.with_columns(pl.col("ts").dt.truncate("1w").dt.date().alias("week"))
    assert sum(r["views"] for r in weeks.values()) == frame.height
    for (week,), group in weekly.group_by("week"):
        assert weeks[week]["views"] == group.height and _close(weeks[week]["load_p75"], _p75(group, "load"))
    # the distribution's counts are exact: the same buckets computed in Python
    dist = page_load_reads.distribution(client, ORG, PROJECT, filters, page)
    for metric in ("load", "ttfb", "lcp", "fcp", "inp", "cls"):
        values = frame[metric].drop_nulls().to_list()
        want: dict[int, int] = {}
        for v in values:
            b = math.floor(v * 100) if metric == "cls" else math.floor(math.log10(max(v, 1)) * 10)
            want[b] = want.get(b, 0) + 1
        got = {
            round(math.log10(r["from"]) * 10) if metric != "cls" else round(r["from"] * 100): r["loads"]
            for r in dist.get(metric, [])
        }
        assert got == want, metric
    # releases over the whole project
    everything = _frame(data, filters)
    releases = {r["release"]: r for r in page_load_reads.releases(client, ORG, PROJECT, filters)}
    # A release's first seen is its first page load of all the data (the retention), not of the window: a cut
    # window does not reorder releases that began before it.
    whole = _frame(
        data, ViewFilters(since=datetime(2000, 1, 1, tzinfo=UTC), until=datetime(2100, 1, 1, tzinfo=UTC))
    )
    for (release,), group in everything.group_by("release"):
        assert releases[release]["views"] == group.height
        first = whole.filter(pl.col("release") == release)["ts"].min()
        assert releases[release]["first_seen"].replace(tzinfo=UTC) == first
        assert _close(releases[release]["load_p75"], _p75(group, "load"))
    calls = [
        s["duration_ms"]
        for s in data.spans
        if s["op"] == "http.client"
        and s["transaction_event_id"] in set(everything["event_id"].to_list())
        and s["release"] == "shop@1.1.0"
    ]
    if calls:
        api = pl.Series([float(c) for c in calls]).quantile(0.95, "linear")
        assert _close(releases["shop@1.1.0"]["api_p95"], api)
    # the filters offer every value of the window, whatever is picked, most loads first
    facets = page_load_reads.facets(
        client, ORG, PROJECT, ViewFilters.parse(since=window[0], until=window[1], browser="Safari")
    )
    counts = everything.group_by("browser").len().sort("len", descending=True)
    assert facets["browser"] == counts["browser"].to_list()


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("dims", DIMS)
def test_samples_over_cut_windows_and_filters(world, window, dims) -> None:
    """Fastest and slowest are exact (merged from the states' own 3); the median samples are real page
    loads of the window near its median (examples of the 1 % buckets around the merged histogram's median,
    one per state): within the read buckets (≤ 4.1 % of the exact median) and, when an exact scan finds one
    within 2.5 %, the nearest no more than 1.1 % of the median further from it than that one."""
    client, data = world
    filters = ViewFilters.parse(since=window[0], until=window[1], now=NOW, **dims)
    page = "/checkout"
    frame = _frame(data, filters, page)
    picked = page_load_reads.samples(client, ORG, PROJECT, filters, page)
    kinds = {k: [r for r in picked if r["kind"] == k] for k in ("fastest", "median", "slowest")}
    loads = (
        list(zip(frame["load"].to_list(), frame["event_id"].to_list(), strict=True)) if frame.height else []
    )
    assert sorted((r["load_ms"], r["event_id"]) for r in kinds["fastest"]) == sorted(loads)[:3]
    slowest = sorted(loads, key=lambda x: (-x[0], x[1]))[:3]
    assert sorted((r["load_ms"], r["event_id"]) for r in kinds["slowest"]) == sorted(slowest)
    shown = [r["load_ms"] for r in kinds["slowest"]]
    assert shown == sorted(shown, reverse=True), "the slowest are listed slowest first"
    if not loads:
        assert picked == []
        return
    by_id = {e: (load, ts) for e, load, ts in zip(frame["event_id"], frame["load"], frame["ts"], strict=True)}
    for r in picked:  # every sample is a page load of the window, page and filters, as the facts hold it
        assert by_id[r["event_id"]] == (r["load_ms"], r["ts"].replace(tzinfo=UTC)), r
    median = float(frame["load"].quantile(0.5, "linear"))
    got = sorted(abs(r["load_ms"] - median) for r in kinds["median"])
    assert len({r["event_id"] for r in kinds["median"]}) == len(got) <= 3
    assert all(d <= 0.041 * median for d in got)
    exact = min(abs(load - median) for load, _ in loads)
    if exact <= 0.025 * median:
        assert got and got[0] <= exact + 0.011 * median


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("cls", [0.0, 0.0, 0.001, 0.01, 0.05, 0.1, 0.12, 0.3, 1.4]),  # unitless, zeros and values far below 1
        (
            "dom_ready",
            [-3.0, 0.0, 2.5, 7.0, 120.0, 121.0, 5000.0, 80_000.0],
        ),  # a negative DOM ready, zero, ms
        ("load_ms", [412.0]),
        ("load_ms", [3.0, 3.0, 3.0, 3.0]),
        ("load_ms", [0.0, 0.4, 1.0, 1.0, 17.0, 250.0, 251.0, 252.0, 9_000.0, 125_000.0]),
    ],
)
def test_percentiles_of_zero_negative_and_tiny_values_stay_within_half_a_percent(
    world, column, values
) -> None:
    """Page loads written straight into the facts of one hour (a project of their own), through the pipeline's
    hour, minute and day fills, read over a window that takes the whole hour from the hour states and a
    partial hour from the minute states: every p75 within 0.5 % of polars."""
    client, _ = world
    project, hour = 4242 + len(values) + int(sum(values)) % 1000, datetime(2026, 11, 10, 8, tzinfo=UTC)
    # half the loads in the whole hour 08:00, half in the partial hour 09:00-09:30 the window ends in
    rows = [
        [
            ORG,
            project,
            hour.replace(hour=8 + i % 2, minute=5 + i),
            uuid.UUID(int=project * 1000 + i),
            "/x",
            "production",
            "",
            "Chrome",
            0,
            v if column == "load_ms" else 100.0,
            None,
            None,
            None,
            None,
            v if column == "cls" else None,
            v if column == "dom_ready" else None,
            None,
            None,
            0,
            0,
            [],
            0,
            datetime.now(UTC),
        ]
        for i, v in enumerate(values)
    ]
    client.insert("pageload_facts", rows, column_names=FACT_COLUMNS)
    bounds = {"start": hour, "end": hour.replace(hour=10), "materialized_at": datetime.now(UTC)}
    for query in TABLES["pageload_periods"].queries:  # hours, minutes, days, blocks
        client.command(load_query(f"pipelines/{query}"), parameters=bounds)
    filters = ViewFilters.parse(since="2026-11-10T07:30:00Z", until="2026-11-10T09:30:00Z", now=NOW)
    assert filters.whole_hours()["whole_end"] == hour.replace(hour=9)
    total, _ = page_load_reads.pages(client, ORG, project, filters)
    assert total is not None and total["views"] == len(values)
    key = {"load_ms": "load_p75", "cls": "cls_p75"}.get(column)
    got = dict(total)[key] if key else page_load_reads.daily(client, ORG, project, filters)[0]["dom_p75"]
    exact = float(pl.Series(values).quantile(0.75, "linear"))
    assert got is not None and abs(got - exact) <= 0.005 * abs(exact) + 1e-12, (got, exact)


FACT_COLUMNS = [
    "org_id", "project_id", "ts", "event_id", "page", "environment", "release", "browser", "mobile", "load_ms",
    "ttfb", "fcp", "lcp", "inp", "cls", "dom_ready", "resource_ms", "score", "api_calls", "api_errors", "api_ms",
    "js_bytes", "materialized_at",
]  # fmt: skip
