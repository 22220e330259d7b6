"""Explore against the real embedded engine: for the same metric, filters and window its figures are the
performance views', the budgets' and the alert rules' (window_values) to the last digit and within the
catalog's stated error of polars over the raw rows (counts, sums and the other aggregates exact), series
keep gaps, another organization's rows never count, and the limits answer plain messages."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest

from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import QueryTooCostly, TooManyQueries, org_slot, plain_value, run_explore
from stacklens.explore.sql import Limits
from stacklens.json_values import plain
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR
from stacklens.performance import view_data
from stacklens.performance.budget_eval import BudgetSpec
from stacklens.performance.budget_eval import evaluate as evaluate_budgets
from stacklens.performance.window_values import WindowRequest, compute_at
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

WINDOW = {"since": "2026-11-05T00:00:00Z", "until": "2026-11-20T13:00:00Z"}


@pytest.fixture
def seeded(settings: Settings):
    client = migrated(settings)
    rows = seed(client, 1, 11, loads=150, facts=False)
    seed(client, 2, 22, loads=40, seed=3)  # another organization
    events = []
    for i in range(60):
        events.append(
            [
                1,
                11,
                uuid.uuid4(),
                NOW - timedelta(hours=i * 3),
                NOW,
                "shop@1.0.0" if i % 3 else "shop@1.1.0",
                "production",
                f"user-{i % 7}",
                {"region": "eu" if i % 2 else "us"},
            ]
        )
    events.append([2, 22, uuid.uuid4(), NOW - timedelta(hours=1), NOW, "shop@1.0.0", "production", "x", {}])
    client.insert(
        "events",
        events,
        column_names=[
            "org_id",
            "project_id",
            "event_id",
            "timestamp",
            "received_at",
            "release",
            "environment",
            "user_key",
            "tags",
        ],
    )
    return client, rows


def _pageloads(rows) -> pl.DataFrame:
    frame = pl.DataFrame(
        [
            {
                "release": r["release"],
                "environment": r["environment"],
                "load": r["duration_ms"],
                "lcp": r["measurements"].get("lcp"),
                "ts": r["timestamp"],
            }
            for r in rows.transactions
            if r["op"] == "pageload"
        ]
    )
    return frame


def test_count_avg_p75_by_release_equal_polars(seeded) -> None:
    client, rows = seeded
    query = parse_query(
        {
            "dataset": "pageloads",
            **WINDOW,
            "group_by": ["release"],
            "aggregates": [
                {"fn": "count"},
                {"fn": "avg", "metric": "load_time_ms"},
                {"fn": "p75", "metric": "lcp"},
            ],
            "order_by": "release",
        }
    )
    result = run_explore(client, query, 1, [11])
    expected = (
        _pageloads(rows)
        .group_by("release")
        .agg(
            pl.len().alias("count"),
            pl.col("load").mean().alias("avg"),
            pl.col("lcp").quantile(0.75, interpolation="linear").alias("p75"),
        )
        .sort("release")
    )
    assert result.columns == ["release", "count", "load_avg_ms", "lcp_p75_ms", "samples"]
    assert [r["release"] for r in result.rows] == expected["release"].to_list()
    for row, want in zip(result.rows, expected.iter_rows(named=True), strict=True):
        assert row["count"] == want["count"] == row["samples"]
        assert row["load_avg_ms"] == pytest.approx(want["avg"], rel=1e-9)  # a stored sum: exact
        # The views' 1 % log-histogram figure: within the catalog's error of the exact percentile.
        assert row["lcp_p75_ms"] == pytest.approx(want["p75"], rel=QUANTILE_RELATIVE_ERROR)
    # The rows the engine read from the table (every page load of the window at least), not the answer's rows.
    assert result.rows_read >= _pageloads(rows).height > len(result.rows) and not result.truncated


def test_p75_equals_the_performance_view(seeded) -> None:
    client, _ = seeded
    filters = ViewFilters.parse(**WINDOW, environment="production")
    total = view_data.overview(client, 1, 11, filters)["total"]
    query = parse_query(
        {
            "dataset": "pageloads",
            **WINDOW,
            "filters": [{"field": "environment", "op": "=", "value": "production"}],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}, {"fn": "count", "metric": "lcp"}],
        }
    )
    row = run_explore(client, query, 1, [11]).rows[0]
    assert row["lcp_p75_ms"] == total["lcp_p75"]
    assert row["count_lcp_ms"] == total["lcp_n"]


# Windows cut at seconds (widened to whole minutes by every consumer alike), inside an hour, across midnight
# and over days.
CUT_WINDOWS = [
    (datetime(2026, 11, 13, 9, 26, 47, tzinfo=UTC), datetime(2026, 11, 20, 9, 58, 13, tzinfo=UTC)),
    (datetime(2026, 11, 18, 23, 12, 5, tzinfo=UTC), datetime(2026, 11, 19, 20, 0, 31, tzinfo=UTC)),
    (datetime(2026, 11, 6, 0, 0, tzinfo=UTC), datetime(2026, 11, 20, 12, 0, tzinfo=UTC)),
    (datetime(2026, 11, 19, 2, 3, 59, tzinfo=UTC), datetime(2026, 11, 19, 21, 41, 2, tzinfo=UTC)),
]


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _explore(client, dataset: str, since: datetime, until: datetime, aggregates, **more) -> list[dict]:
    body = {"dataset": dataset, "since": _iso(since), "until": _iso(until), "aggregates": aggregates, **more}
    return run_explore(client, parse_query(body), 1, [11]).rows


def _close(value, exact) -> bool:
    """Within the catalog's stated error of the exact figure (both None when the window holds no values)."""
    if value is None or exact is None:
        return value is exact
    return abs(value - exact) <= QUANTILE_RELATIVE_ERROR * abs(exact)


def _same(value, other) -> bool:
    """Equal to the last digit: a percentile is the same float; an average the same up to the order its sums
    were added in."""
    if value is None or other is None:
        return value is other
    return value == other or abs(value - other) <= 1e-9 * abs(other)


@pytest.mark.parametrize(("since", "until"), CUT_WINDOWS)
def test_explore_equals_the_views_budgets_and_alerts(seeded, since: datetime, until: datetime) -> None:
    """Page loads, API calls and resource requests folded by the pipelines' own queries into the states:
    for the same window Explore's p75 LCP, p75 load time, mean LCP (a histogram mean: the states keep no
    LCP sum), p95 API time, p95 resource time and counts equal the pages, endpoints and resources views'
    JSON and the value a budget and an alert rule evaluate (window_values, the states budgets and rules
    read), and are within 1 % of polars over the raw rows of the window in whole minutes."""
    client, rows = seeded
    window = ViewFilters(since=since, until=until)
    inside = (pl.col("ts") >= window.since) & (pl.col("ts") < window.until)

    def view(name: str) -> dict:
        return plain(view_data.build(name, client, 1, 11, window))

    # Page loads: the pages view's total row, the rules' window values, polars.
    total = view("pages")["total"]
    loads = _pageloads(rows).filter(inside)
    [page] = _explore(
        client,
        "pageloads",
        since,
        until,
        [
            {"fn": "count"},
            {"fn": "p75", "metric": "lcp_ms"},
            {"fn": "p75", "metric": "load_time_ms"},
            {"fn": "avg", "metric": "lcp_ms"},
            {"fn": "avg", "metric": "load_time_ms"},
            {"fn": "count", "metric": "lcp_ms"},
        ],
    )
    count, lcp_p75, load_p75, lcp_avg, load_avg, lcp_n, _ = page.values()
    assert count == total["views"] == loads.height > 0
    assert lcp_n == total["lcp_n"] == loads["lcp"].count()
    assert lcp_p75 == total["lcp_p75"] and load_p75 == total["load_p75"]
    assert _same(load_avg, total["load_avg"])
    asked = [
        ("lcp_ms", "p75"),
        ("load_time_ms", "p75"),
        ("lcp_ms", "avg"),
        ("load_time_ms", "avg"),
        ("api_ms", "p95"),
    ]
    rules = compute_at(
        client,
        [(WindowRequest(11, metric, statistic, window=until - since), until) for metric, statistic in asked],
    )
    assert all((r.since, r.until) == (window.since, window.until) for r in rules)
    assert [rules[0].value, rules[1].value] == [lcp_p75, load_p75]
    assert _same(rules[2].value, lcp_avg) and _same(rules[3].value, load_avg)
    assert (rules[0].samples, rules[1].samples) == (lcp_n, count)
    assert _close(lcp_p75, loads["lcp"].quantile(0.75, "linear")) and _close(lcp_avg, loads["lcp"].mean())
    assert _close(load_p75, loads["load"].quantile(0.75, "linear")) and _same(load_avg, loads["load"].mean())

    # API calls: the endpoints view's rows per source, method and path; the rules read the server side.
    calls = pl.DataFrame(
        [
            {"ts": r["timestamp"], "path": r["page"], "ms": r["duration_ms"]}
            for r in rows.transactions
            if r["op"] == "http.server"
        ]
    ).filter(inside)
    endpoints = {(r["source"], r["method"], r["path"]): r for r in view("endpoints")["rows"]}
    server = [{"field": "source", "op": "=", "value": "server"}]
    api = [{"fn": "count"}, {"fn": "p95", "metric": "api_ms"}, {"fn": "avg", "metric": "api_ms"}]
    by_endpoint = _explore(
        client, "api_calls", since, until, api, group_by=["source", "method", "path"], order_by="path"
    )
    assert {(r["source"], r["method"], r["path"]) for r in by_endpoint} == set(endpoints)
    for row in by_endpoint:
        shown = endpoints[(row["source"], row["method"], row["path"])]
        assert row["count"] == shown["calls"] and row["api_p95_ms"] == shown["p95_ms"], row
        assert _same(row["api_avg_ms"], shown["avg_ms"])
        if row["source"] == "server":
            durations = calls.filter(pl.col("path") == row["path"])["ms"]
            assert row["count"] == durations.len()
            assert _close(row["api_p95_ms"], durations.quantile(0.95, "linear"))
    [whole] = _explore(client, "api_calls", since, until, api, filters=server)
    assert whole["count"] == rules[4].samples == calls.height
    assert whole["api_p95_ms"] == rules[4].value
    assert _close(whole["api_p95_ms"], calls["ms"].quantile(0.95, "linear") if calls.height else None)

    # Resource requests: the resources view's rows per type.
    types = {r["resource_type"]: r for r in view("resources")["rows"]}
    per_type = _explore(
        client,
        "resources",
        since,
        until,
        [{"fn": "count"}, {"fn": "p95", "metric": "resource_duration_ms"}],
        group_by=["resource_type"],
    )
    assert {r["resource_type"]: (r["count"], r["resource_duration_p95_ms"]) for r in per_type} == {
        name: (r["requests"], r["p95_ms"]) for name, r in types.items()
    }


def test_explore_equals_the_budget(seeded) -> None:
    """A budget on p75 LCP over 7 days, evaluated at a time cut at seconds: Explore over the same 7 days."""
    client, rows = seeded
    at = datetime(2026, 11, 20, 11, 37, 12, tzinfo=UTC)
    [got] = evaluate_budgets(client, [BudgetSpec(1, 11, "lcp_ms", "p75", "*", 2500.0, 7, 1)], at)
    window = ViewFilters(since=at - timedelta(days=7), until=at)
    [row] = _explore(
        client,
        "pageloads",
        at - timedelta(days=7),
        at,
        [{"fn": "p75", "metric": "lcp"}, {"fn": "count", "metric": "lcp"}],
    )
    assert (row["lcp_p75_ms"], row["count_lcp_ms"]) == (got.value, got.samples)
    lcp = _pageloads(rows).filter((pl.col("ts") >= window.since) & (pl.col("ts") < window.until))["lcp"]
    assert _close(got.value, lcp.quantile(0.75, "linear")) and got.samples == lcp.count()


def test_errors_by_tag_with_series_keep_gaps_and_scope(seeded) -> None:
    client, _ = seeded
    query = parse_query(
        {
            "dataset": "errors",
            **WINDOW,
            "filters": [{"field": "release", "op": "in", "value": ["shop@1.0.0", "shop@1.1.0"]}],
            "group_by": ["tag:region"],
            "aggregates": [{"fn": "count"}, {"fn": "unique_users"}],
            "interval": "1h",
        }
    )
    result = run_explore(client, query, 1, [11])
    assert {r["tag:region"]: r["count"] for r in result.rows} == {"eu": 30, "us": 30}
    assert [r["unique_users"] for r in result.rows] == [7, 7]  # user-0 … user-6 in both regions
    # One event every 3 hours: hourly buckets without events are absent, not 0.
    for series in result.series:
        assert len(series["t"]) == 30 and 0 not in series["values"]["count"]
    # Another organization's project: nothing, even though the ids are sent.
    assert run_explore(client, query, 1, [22]).rows == []
    assert sum(r["count"] for r in run_explore(client, query, 2, [22]).rows) == 1


def test_rate_per_1k_divides_by_the_page_loads_of_the_same_group(seeded) -> None:
    client, rows = seeded
    query = parse_query(
        {"dataset": "errors", **WINDOW, "group_by": ["release"], "aggregates": [{"fn": "rate_per_1k"}]}
    )
    result = run_explore(client, query, 1, [11])
    loads = _pageloads(rows).group_by("release").len()
    per_release = dict(zip(loads["release"].to_list(), loads["len"].to_list(), strict=True))
    for row in result.rows:
        assert row["error_events_per_1k"] == pytest.approx(
            1000 * row["samples"] / per_release[row["release"]]
        )


def test_limits_answer_plain_messages(seeded) -> None:
    client, _ = seeded
    query = parse_query({"dataset": "pageloads", "range": "90d", "group_by": ["url", "page", "transaction"]})
    with pytest.raises(QueryTooCostly, match="memory limit"):
        run_explore(client, query, 1, [11], limits=Limits(max_memory_bytes=10_000))
    with org_slot(1, most=2), org_slot(1, most=2), pytest.raises(TooManyQueries, match="already runs 2"):
        run_explore(client, query, 1, [11])


def test_injection_strings_as_values_are_only_values(seeded) -> None:
    client, _ = seeded
    for text in ("' OR 1=1 --", "x') UNION ALL SELECT * FROM system.tables --", "{v0:String}"):
        query = parse_query(
            {
                "dataset": "errors",
                **WINDOW,
                "filters": [
                    {"field": "release", "op": "=", "value": text},
                    {"field": "tag:region", "op": "contains", "value": text},
                ],
            }
        )
        assert run_explore(client, query, 1, [11]).rows == [{"count": 0, "samples": 0}]


def test_sessions_equal_the_release_health_view(settings: Settings) -> None:
    """Crash-free sessions and users, errored sessions, sessions and users per release: what the release pages
    read from the session states, from the raw rows (a session's updates counted once, aggregates by
    quantity)."""
    from stacklens.releases.health import Window, release_health
    from tests.stacklens.releases.session_seed import fill_session_states, seed_sessions

    client = migrated(settings)
    spans = {
        "shop@1.0.0": (NOW - timedelta(days=14), NOW - timedelta(days=7), 0.01),
        "shop@1.1.0": (NOW - timedelta(days=7), NOW - timedelta(minutes=3), 0.06),
    }
    seed_sessions(client, 1, 11, releases=spans, browser_sessions=1200, seed=3)
    seed_sessions(client, 2, 22, releases=spans, browser_sessions=200, seed=4)  # another organization
    fill_session_states(client, NOW - timedelta(days=15), NOW + timedelta(hours=1))
    since, until = NOW - timedelta(days=10), NOW
    view = {r.version: r for r in release_health(client, 1, 11, Window(since, until), "")}
    query = parse_query(
        {
            "dataset": "sessions",
            "since": since.isoformat(),
            "until": until.isoformat(),
            "group_by": ["release"],
            "aggregates": [
                {"fn": "count"},
                {"fn": "count", "metric": "users"},
                {"fn": "avg", "metric": "crash_free_sessions"},
                {"fn": "avg", "metric": "crash_free_users"},
                {"fn": "avg", "metric": "errored_sessions_pct"},
            ],
            "interval": "1d",
        }
    )
    result = run_explore(client, query, 1, [11])
    assert result.columns == [
        "release",
        "count",
        "users",
        "crash_free_sessions_pct",
        "crash_free_users_pct",
        "errored_sessions_pct",
        "samples",
    ]
    assert {r["release"] for r in result.rows} == {v for v, r in view.items() if r.sessions}
    for row, counts in zip(result.rows, result.value_samples, strict=True):
        health = view[row["release"]]
        assert row["count"] == row["samples"] == health.sessions
        # The release pages count users with uniqCombined64(12) states (exact up to ~100 users, then a
        # HyperLogLog about 2 % off), Explore exactly over the raw rows: as close as the release tests ask.
        assert (
            row["users"] == health.users
            if health.users <= 100
            else abs(row["users"] - health.users) <= 0.05 * health.users
        )
        assert row["crash_free_sessions_pct"] == pytest.approx(health.crash_free_sessions)
        assert row["crash_free_users_pct"] == pytest.approx(health.crash_free_users, abs=1.0)
        assert row["errored_sessions_pct"] == pytest.approx(health.errored_sessions_pct)
        assert counts["crash_free_sessions_pct"] == health.sessions
        assert counts["crash_free_users_pct"] == row["users"]
    # Per day: the sessions of each day add up to the window's.
    for series in result.series:
        total = next(r["count"] for r in result.rows if r["release"] == series["group"]["release"])
        assert sum(series["values"]["count"]) == total
    with pytest.raises(BadQuery, match=r"aggregates\[0\]\.fn: crash_free_sessions allows avg"):
        parse_query({"dataset": "sessions", "aggregates": [{"fn": "p75", "metric": "crash_free_sessions"}]})


def test_every_aggregate_explore_offers_runs(settings: Settings) -> None:
    """Issue #47: the aggregate menu offered `p75(page_loads)` and `rate_per_1k` on page loads, which the
    server then refused. Every (function, metric) the page offers for a dataset parses and runs against the
    warehouse; those it leaves out are refused."""
    from stacklens.explore.datasets import DATASETS
    from stacklens.explore.query import FNS
    from stacklens.explore.query_parser import offered_aggregates

    client = migrated(settings)
    for key, dataset in DATASETS.items():
        offered = offered_aggregates(dataset)
        assert offered, key
        for start in range(0, len(offered), 10):  # at most 10 aggregates per query
            aggregates = [{"fn": fn, "metric": m} for fn, m in offered[start : start + 10]]
            query = parse_query({"dataset": key, "project": "p", "range": "7d", "aggregates": aggregates})
            run_explore(client, query, 1, [11])  # raises BadQuery when the server refuses one
        metrics = ("", *sorted({*dataset.metrics, dataset.counted}))
        for fn in FNS:
            for metric in metrics:
                if (fn, metric) in offered or (metric and (fn, "") in offered):
                    continue
                with pytest.raises(BadQuery):
                    parse_query(
                        {
                            "dataset": key,
                            "project": "p",
                            "range": "7d",
                            "aggregates": [{"fn": fn, "metric": metric}],
                        }
                    )
    pageloads = offered_aggregates(DATASETS["pageloads"])
    assert ("p75", "page_loads") not in pageloads and not any(fn == "rate_per_1k" for fn, _ in pageloads)


def test_the_analyst_lane_queues_questions_of_every_organization_then_refuses(monkeypatch) -> None:
    """Questions beyond the server's analyst lane wait for it, whatever their organization, and are refused
    with a plain message once they have waited their limit: ingest and the pages keep the other cores."""
    import threading
    import time

    from stacklens.explore import run

    monkeypatch.setattr(run, "_lane", threading.BoundedSemaphore(1))
    order: list[str] = []
    with run.analyst_lane():
        waiting = threading.Thread(target=lambda: _in_lane(run, order, "second organization"))
        waiting.start()
        time.sleep(0.3)
        assert order == []  # the other organization's question waits; it is not refused
        with pytest.raises(TooManyQueries, match="analyst queries at once"), run.analyst_lane(wait_s=0.1):
            pass
        order.append("first")
    waiting.join(timeout=5)
    assert order == ["first", "second organization"]


def _in_lane(run: Any, order: list[str], name: str) -> None:
    with run.analyst_lane(wait_s=5):
        order.append(name)


def test_times_are_answered_in_utc_with_a_z_whether_or_not_the_engine_named_the_zone() -> None:
    """A browser reads a time without a zone as local time: every time leaves with its Z."""
    assert plain_value(datetime(2026, 11, 28, 10, 0)) == "2026-11-28T10:00:00Z"
    assert plain_value(datetime(2026, 11, 28, 10, 0, tzinfo=UTC)) == "2026-11-28T10:00:00Z"
    assert plain_value([datetime(2026, 11, 28, 10, 0, 30)]) == ["2026-11-28T10:00:30Z"]
