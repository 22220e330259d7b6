"""Metric windows read from the states the views read: many requests in one query give each what the pages and
endpoints views give for the same window and filters; one window at many times gives what each time's own
evaluation gives; the error rate is the endpoints view's; bytes per page view and the failed transactions are
exact over the raw rows (polars)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from stacklens.performance import endpoint_reads, page_load_reads
from stacklens.performance.window_series import series
from stacklens.performance.window_values import (
    WindowError,
    WindowRequest,
    bounds,
    compute_many,
    like_pattern,
    source,
)
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import reset_clients
from tests.conftest import make_settings
from tests.stacklens.performance.perf_seed import migrated, seed

ORG, PROJECT = 12, 120
AT = datetime(2026, 11, 19, 9, 42, 10, tzinfo=UTC)  # seconds into a minute, 9 h 42 into a day
WINDOWS = [timedelta(days=7), timedelta(hours=5, minutes=13), timedelta(days=1), timedelta(minutes=50)]


@pytest.fixture(scope="module")
def world(tmp_path_factory, warehouse_url):
    settings = make_settings(tmp_path_factory.mktemp("window-values"), warehouse_url)
    client = migrated(settings)
    data = seed(client, ORG, PROJECT, loads=500, seed=12)
    yield client, data
    reset_clients()


def _loads(data, window: ViewFilters) -> pl.DataFrame:
    """The page loads of the window with their bytes (every resource and API call) and scripts' bytes."""
    sizes: dict = {}
    for s in data.spans:
        total, js = sizes.get(s["transaction_event_id"], (0, 0))
        size = next((v for v in (s["response_content_length"], s["transfer_size"]) if v is not None), 0)
        if s["op"].startswith("resource.") or s["op"] == "http.client":
            total += size
        if s["op"] == "resource.script":
            js += size
        sizes[s["transaction_event_id"]] = (total, js)
    rows = [
        {
            "page": t["page"],
            "total": sizes.get(t["event_id"], (0, 0))[0],
            "js": sizes.get(t["event_id"], (0, 0))[1],
        }
        for t in data.transactions
        if t["op"] == "pageload" and window.since <= t["timestamp"] < window.until
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


@pytest.mark.parametrize("window", WINDOWS)
def test_many_windows_in_one_query_give_the_views_values(world, window) -> None:
    client, _ = world
    cut = ViewFilters(since=AT - window, until=AT)
    total, rows = page_load_reads.pages(client, ORG, PROJECT, cut)
    staging, _ = page_load_reads.pages(
        client, ORG, PROJECT, ViewFilters(cut.since, cut.until, environment="staging")
    )
    firefox, _ = page_load_reads.pages(
        client, ORG, PROJECT, ViewFilters(cut.since, cut.until, browser="Firefox")
    )
    requests = [
        WindowRequest(PROJECT, "lcp_ms", "p75", "*", window),
        WindowRequest(PROJECT, "load_time_ms", "avg", "*", window),
        WindowRequest(PROJECT, "load_time_ms", "p75", "/checkout", window),
        WindowRequest(PROJECT, "ttfb_ms", "p75", "*", window, environment="staging"),
        WindowRequest(PROJECT, "inp_ms", "p75", "*", window, browser="Firefox"),
        WindowRequest(PROJECT, "cls", "p75", "/products/*", window),
        WindowRequest(PROJECT, "load_time_ms", "p50", "/nothing", window),
    ]
    got = compute_many(client, requests, AT)
    assert all((g.since, g.until) == (cut.since, cut.until) for g in got)  # the view's window, whole minutes
    page = {r["page"]: r for r in rows}
    if total is None:
        assert all(g.value is None and g.samples == 0 for g in got)
        return
    assert (got[0].value, got[0].samples) == (total["lcp_p75"], total["lcp_n"])
    assert got[1].samples == total["views"] and got[1].value == pytest.approx(total["load_avg"], rel=1e-12)
    checkout = page.get("/checkout")
    assert (got[2].value, got[2].samples) == (
        (checkout["load_p75"], checkout["views"]) if checkout else (None, 0)
    )
    assert (got[3].value, got[3].samples) == (
        (staging["ttfb_p75"], staging["ttfb_n"]) if staging else (None, 0)
    )
    assert got[4].samples == (firefox["inp_n"] if firefox else 0) == 0  # Firefox reports no INP
    products = page.get("/products/{id}")  # the only page the pattern matches
    assert (got[5].value, got[5].samples) == (
        (products["cls_p75"], products["cls_n"]) if products else (None, 0)
    )
    assert (got[6].value, got[6].samples) == (None, 0)


def test_api_time_and_error_rate_are_the_endpoints_views_and_bytes_and_failures_are_exact(world) -> None:
    client, data = world
    window = timedelta(days=7)
    cut = ViewFilters(since=AT - window, until=AT)
    endpoints = [
        e for e in endpoint_reads.endpoints(client, ORG, PROJECT, cut, "calls") if e["source"] == "server"
    ]
    cart = next(e for e in endpoints if e["path"] == "/api/cart")
    production = ViewFilters(cut.since, cut.until, environment="production")
    served = [
        e for e in endpoint_reads.endpoints(client, ORG, PROJECT, production) if e["source"] == "server"
    ]
    api, api_all, js, transfer, failed, errors, errors_all = compute_many(
        client,
        [
            WindowRequest(PROJECT, "api_ms", "p95", "/api/cart", window),
            WindowRequest(PROJECT, "api_p95_ms", "p95", "/api/*", window),
            WindowRequest(PROJECT, "js_bytes", "avg", "*", window),
            WindowRequest(PROJECT, "transfer_bytes", "avg", "/checkout", window),
            WindowRequest(PROJECT, "failed_transactions_pct", "avg", "*", window, environment="production"),
            WindowRequest(PROJECT, "error_pct", "avg", "/api/cart", window),
            WindowRequest(PROJECT, "error_pct", "avg", "*", window, environment="production"),
        ],
        AT,
    )
    assert (api.value, api.samples) == (cart["p95_ms"], cart["calls"])  # one method: the view's row
    assert api_all.samples == sum(e["calls"] for e in endpoints)
    # The error rate is the endpoints view's: calls answered 4xx or 5xx over all calls, exact.
    assert (errors.value, errors.samples) == (cart["error_pct"], cart["calls"])
    assert errors_all.samples == sum(e["calls"] for e in served)
    answered = sum(e["s4xx"] + e["s5xx"] for e in served)
    assert errors_all.value == pytest.approx(100 * answered / errors_all.samples, rel=1e-12)
    loads = _loads(data, cut)
    assert js.samples == loads.height and js.value == pytest.approx(loads["js"].mean(), rel=1e-12)
    checkout = loads.filter(pl.col("page") == "/checkout")
    assert transfer.samples == checkout.height
    assert transfer.value == pytest.approx(checkout["total"].mean(), rel=1e-12)
    tx = [
        t
        for t in data.transactions
        if cut.since <= t["timestamp"] < cut.until and t["environment"] == "production"
    ]
    bad = [t for t in tx if t["http_status"] >= 500]  # the seed sends no status: HTTP >= 500 is what fails
    assert failed.samples == len(tx) and failed.value == pytest.approx(100 * len(bad) / len(tx))


@pytest.mark.parametrize(
    ("metric", "statistic", "scope"),
    [
        ("lcp_ms", "p75", "*"),
        ("load_time_ms", "avg", "/checkout"),
        ("api_ms", "p50", "*"),
        ("error_pct", "avg", "*"),
        ("error_pct", "avg", "/api/cart"),
        ("failed_transactions_pct", "avg", "*"),
    ],
)
def test_a_series_gives_each_times_own_evaluation(world, metric, statistic, scope) -> None:
    client, _ = world
    for window in (timedelta(days=7), timedelta(minutes=90)):
        request = WindowRequest(PROJECT, metric, statistic, scope, window)
        hours = [AT.replace(minute=0, second=0) - timedelta(hours=6 * i) for i in range(12, -1, -1)]
        points = [*hours, AT, AT - timedelta(minutes=17, seconds=3)]  # whole hours, then cut anywhere
        got = series(client, request, points)
        own = [compute_many(client, [request], p)[0] for p in points]
        assert [g[0] for g in got] == points
        for (_, value, samples), want in zip(got, own, strict=True):
            assert samples == want.samples
            assert value == pytest.approx(want.value, rel=1e-12) if want.value is not None else value is None
        assert any(samples for _, _, samples in got)


def test_more_distinct_windows_than_one_query_holds(world) -> None:
    client, _ = world
    requests = [WindowRequest(PROJECT, "lcp_ms", "p75", "*", timedelta(hours=h)) for h in range(1, 71)]
    got = compute_many(client, requests, AT)
    for request, value in zip(requests[::23], got[::23], strict=True):
        assert value == compute_many(client, [request], AT)[0]


def test_windows_are_whole_minutes_and_bad_requests_are_named() -> None:
    assert bounds(AT, timedelta(hours=1)) == (
        datetime(2026, 11, 19, 8, 42, tzinfo=UTC),
        datetime(2026, 11, 19, 9, 43, tzinfo=UTC),
    )
    with pytest.raises(WindowError, match="unknown metric 'fcp'"):
        source("fcp", "p75")
    with pytest.raises(WindowError, match="js_bytes has the statistics avg; not 'p75'"):
        compute_many(None, [WindowRequest(PROJECT, "js_bytes", "p75")], AT)
    assert (
        like_pattern("/a_b/*") == "/a\\_b/%" and like_pattern("*") == "%" and like_pattern("/x%") == "/x\\%"
    )


def test_every_budget_and_rule_metric_has_a_source() -> None:
    """What budgets and alert rules may name, the window evaluation can read (with each statistic they
    allow)."""
    from stacklens.performance import budget_rules

    for key, metric in budget_rules.METRICS.items():
        for statistic in metric.statistics:
            if key in budget_rules.FIXED_STATISTIC and statistic != metric.statistics[0]:
                continue  # the metric's own statistic is the one evaluated, whatever is sent
            assert source(key, statistic).kind, (key, statistic)
