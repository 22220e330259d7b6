"""Explore against the real embedded engine: aggregates equal polars over the same raw rows, the performance
view's p75 within the catalog's stated error, series keep gaps, another organization's rows never count, and the
limits answer plain messages."""

from __future__ import annotations

import uuid
from datetime import timedelta

import polars as pl
import pytest

from stacklens.explore.query import BadQuery, parse_query
from stacklens.explore.run import QueryTooCostly, TooManyQueries, org_slot, run_explore
from stacklens.explore.sql import Limits
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR
from stacklens.performance import views
from stacklens.performance.filters import PerfFilters
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

WINDOW = {"since": "2026-11-05T00:00:00Z", "until": "2026-11-20T13:00:00Z"}


@pytest.fixture
def seeded(settings: Settings):
    client = migrated(settings)
    rows = seed(client, 1, 11, loads=150)
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
        assert row["load_avg_ms"] == pytest.approx(want["avg"], rel=1e-9)
        assert row["lcp_p75_ms"] == pytest.approx(want["p75"], rel=1e-9)
    assert result.rows_read > 0 and not result.truncated


def test_p75_equals_the_performance_view_within_the_stated_error(seeded) -> None:
    client, _ = seeded
    filters = PerfFilters.parse(**WINDOW, environment="production")
    total = views.build("overview", client, 1, 11, filters)["total"]
    query = parse_query(
        {
            "dataset": "pageloads",
            **WINDOW,
            "filters": [{"field": "environment", "op": "=", "value": "production"}],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}, {"fn": "count", "metric": "lcp"}],
        }
    )
    row = run_explore(client, query, 1, [11]).rows[0]
    # The view reads 1 % log-histogram states, Explore the exact raw values: within the catalog's stated error.
    assert row["lcp_p75_ms"] == pytest.approx(total["lcp_p75"], rel=QUANTILE_RELATIVE_ERROR)
    assert row["count_lcp_ms"] == total["lcp_n"]


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


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"dataset": "users"}, "dataset"),
        (
            {"dataset": "errors", "filters": [{"field": "x'; DROP TABLE events --", "op": "=", "value": 1}]},
            "filters[0].field",
        ),
        (
            {"dataset": "errors", "filters": [{"field": "release", "op": "LIKE", "value": "a"}]},
            "filters[0].op",
        ),
        (
            {"dataset": "errors", "filters": [{"field": "handled", "op": "=", "value": "1 OR 1=1"}]},
            "filters[0].value",
        ),
        ({"dataset": "errors", "group_by": ["release", "release"]}, "group_by[1]"),
        ({"dataset": "errors", "group_by": ["a", "b", "c", "d"]}, "group_by"),
        ({"dataset": "errors", "aggregates": [{"fn": "median", "metric": "x"}]}, "aggregates[0].fn"),
        (
            {"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "sleep(10)"}]},
            "aggregates[0].metric",
        ),
        ({"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "api_ms"}]}, "aggregates[0].metric"),
        ({"dataset": "pageloads", "interval": "1y"}, "interval"),
        ({"dataset": "pageloads", "order_by": "1; DROP"}, "order_by"),
        ({"dataset": "pageloads", "limit": 10**9}, "limit"),
        ({"dataset": "pageloads", "range": "forever"}, "range"),
        ({"dataset": "pageloads", "since": "yesterday"}, "since"),
        ({"dataset": "pageloads", "since": "9999-01-01T00:00:00Z", "until": "9999-02-01T00:00:00Z"}, "since"),
        ({"dataset": "pageloads", "sql": "SELECT 1"}, "sql"),
        ({"dataset": "pageloads", "group_by": ["tag:a'b"]}, "group_by[0]"),
    ],
)
def test_bad_queries_name_the_field(body, named) -> None:
    with pytest.raises(BadQuery if named not in ("range", "since") else Exception) as caught:
        parse_query(body)
    assert str(caught.value).startswith(f"{named}:")


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
    read from the session states, from the raw rows (a session's updates counted once, aggregates by quantity)."""
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
