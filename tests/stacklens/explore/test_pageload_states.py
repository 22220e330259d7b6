"""Page-load questions answered from the states equal the raw path's answers: the same data, random qualifying
questions over random windows (partial-hour and partial-day edges, the states ending inside, before or
after the window), tables and series; a question the states cannot answer keeps the raw rows."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stacklens.explore import pageload_states
from stacklens.explore.query import Query
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.explore.sql import Limits, Statement, series_statement, table_statement
from stacklens.json_values import plain
from stacklens.settings import Settings
from tests.stacklens.explore.inp_spans import interaction_spans
from tests.stacklens.performance.perf_seed import NOW, PAGES, mark_built, migrated, seed

AGGREGATES = [
    {"fn": "count"},
    {"fn": "count", "metric": "lcp_ms"},
    {"fn": "count", "metric": "ttfb_ms"},
    *({"fn": fn, "metric": m} for fn in ("p50", "p75", "p95") for m in ("lcp_ms", "load_time_ms", "cls")),
    {"fn": "p90", "metric": "fcp_ms"},
    {"fn": "p99", "metric": "ttfb_ms"},
    {"fn": "avg", "metric": "load_time_ms"},
    {"fn": "avg", "metric": "ttfb_ms"},
    {"fn": "avg", "metric": "lcp_ms"},
    {"fn": "avg", "metric": "cls"},
    {"fn": "sum", "metric": "load_time_ms"},
    {"fn": "sum", "metric": "ttfb_ms"},
    # INP: the page load's own (the seed's interaction spans give the facts' INP to more page loads).
    {"fn": "p75", "metric": "inp_ms"},
    {"fn": "p50", "metric": "inp_ms"},
    {"fn": "avg", "metric": "inp_ms"},
    {"fn": "count", "metric": "inp_ms"},
]
FILTERS = [
    {"field": "environment", "op": "=", "value": "production"},
    {"field": "browser", "op": "!=", "value": "Safari"},
    {"field": "release", "op": "in", "value": ["shop@1.1.0"]},
    {"field": "page", "op": "contains", "value": "product"},
]


@pytest.fixture
def seeded(settings: Settings):
    client = migrated(settings)
    loads = seed(client, 1, 11, loads=400, facts=False).transactions
    loads += seed(client, 1, 12, loads=120, seed=5, facts=False).transactions  # a second project
    # Standalone INP spans: the facts' INP (and the states' `inp_*`) count them, Explore's INP does not.
    assert interaction_spans(client, loads, random.Random(8)) > 50
    seed(client, 2, 22, loads=80, seed=3)  # another organization: never counted
    rng = random.Random(4)
    client.insert(
        "events",
        [
            [
                org,
                project,
                uuid.UUID(int=rng.getrandbits(128)),
                NOW - timedelta(seconds=rng.randint(0, 14 * 86_400)),
                NOW,
                rng.choice(["shop@1.0.0", "shop@1.1.0"]),
                rng.choice(["production", "staging"]),
                rng.choice(["Chrome", "Firefox", "Safari"]),
            ]
            for org, project in [(1, 11)] * 300 + [(1, 12)] * 60 + [(2, 22)] * 40
        ],
        column_names=[
            "org_id",
            "project_id",
            "event_id",
            "timestamp",
            "received_at",
            "release",
            "environment",
            "browser_name",
        ],
    )
    return client


def _rows(client: Any, statement: Statement) -> list[dict[str, Any]]:
    result = client.query(statement.sql, parameters=statement.parameters)
    return [plain(dict(zip(result.column_names, row, strict=True))) for row in result.result_rows]


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    """Equal answers: counts and percentiles to the last digit, sums and averages up to the order of
    addition."""
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key in x:
            if isinstance(x[key], float) and isinstance(y[key], float):
                assert x[key] == pytest.approx(y[key], rel=1e-12), (key, x, y)
            else:
                assert x[key] == y[key], (key, x, y)


def _question(rng: random.Random, since: datetime, until: datetime) -> Query:
    body: dict[str, Any] = {
        "dataset": "pageloads",
        "since": since.isoformat().replace("+00:00", "Z"),
        "until": until.isoformat().replace("+00:00", "Z"),
        "aggregates": rng.sample(AGGREGATES, rng.randint(1, 4)),
        "group_by": rng.sample(sorted(pageload_states.FIELDS), rng.randint(0, 2)),
        "filters": rng.sample(FILTERS, rng.randint(0, 2)),
        "limit": 1000,
    }
    interval = rng.choice(["", "1h", "6h", "1d", "1w"])
    if interval:
        body["interval"] = interval
    return parse_query(body)


def _statement(query: Query, kind: str, states_until: datetime | None) -> Statement:
    if kind == "series":
        return series_statement(query, 1, [11, 12], Limits(), states_until)
    return table_statement(query, 1, [11, 12], Limits(), 1000, states_until=states_until)


def test_qualifying_questions_equal_the_raw_rows(seeded) -> None:
    client = seeded
    rng = random.Random(50)
    compared = 0
    while compared < 24:
        until = NOW - timedelta(seconds=rng.randint(0, 3 * 86_400))
        since = until - timedelta(seconds=rng.randint(1_800, 10 * 86_400))
        query = _question(rng, since, until)
        assert pageload_states.qualifies(query)
        # A question no page load answers (a short window, its filters) compares nothing: another is drawn.
        if not _rows(client, _statement(query, "table", None)):
            continue
        compared += 1
        window = query.window
        # Where the states end: past the window (all states), inside it at a minute, at its start (all raw).
        span = int((window.until - window.since).total_seconds() // 60)
        cut = rng.choice(
            [window.until + timedelta(days=1), window.since + timedelta(minutes=rng.randint(1, span))]
        )
        kinds = ["table", "series"] if query.interval else ["table"]
        for kind in kinds:
            from_states, raw = (_statement(query, kind, c) for c in (cut, None))
            assert "pageload_periods" in from_states.sql
            assert "pageload_periods" not in raw.sql
            _same(_rows(client, from_states), _rows(client, raw))


def test_error_rates_divide_by_the_page_loads_the_states_count(seeded) -> None:
    """An error rate per 1,000 page loads reads its page loads from the states when its fields and buckets are
    theirs: the same rates as over the raw page loads."""
    client = seeded
    rng = random.Random(47)
    for _ in range(10):
        until = NOW - timedelta(seconds=rng.randint(0, 2 * 86_400))
        since = until - timedelta(seconds=rng.randint(3_600, 10 * 86_400))
        body: dict[str, Any] = {
            "dataset": "errors",
            "since": since.isoformat().replace("+00:00", "Z"),
            "until": until.isoformat().replace("+00:00", "Z"),
            "aggregates": [{"fn": "rate_per_1k"}, {"fn": "count"}],
            "group_by": rng.sample(["environment", "release", "browser"], rng.randint(0, 2)),
            "filters": rng.sample(FILTERS[:3], rng.randint(0, 1)),
            "limit": 1000,
        }
        if rng.random() < 0.5:
            body["interval"] = rng.choice(["1h", "1d"])
        query = parse_query(body)
        assert pageload_states.loads_qualify(query) and not pageload_states.qualifies(query)
        span = int((query.window.until - query.window.since).total_seconds() // 60)
        cut = query.window.since + timedelta(minutes=rng.randint(1, span + 60))
        for kind in ["table", "series"] if query.interval else ["table"]:
            from_states, raw = (_statement(query, kind, c) for c in (cut, None))
            assert "pageload_periods" in from_states.sql and "pageload_periods" not in raw.sql
            _same(_rows(client, from_states), _rows(client, raw))


def test_run_explore_reads_states_to_the_watermark_and_raw_rows_after(seeded) -> None:
    """After the tick (its watermark at now) the answer comes from the states; a page load landed since then
    counts at once, read from the raw rows of the minutes after the watermark."""
    client = seeded
    mark_built(client, "pageload_facts")
    body = {
        "dataset": "pageloads",
        "range": "24h",
        "aggregates": [{"fn": "count"}, {"fn": "p75", "metric": "load_time_ms"}],
    }
    query = parse_query(body)
    states_until = pageload_states.read_states_until(client)
    assert states_until is not None and query.window.since < states_until <= datetime.now(UTC)
    before = run_explore(client, query, 1, [11]).rows[0]["count"]
    client.insert(
        "transactions",
        [[1, 11, NOW, datetime.now(UTC) - timedelta(seconds=1), "pageload", 1234.0, PAGES[0]]],
        column_names=["org_id", "project_id", "event_id", "timestamp", "op", "duration_ms", "page"],
    )
    assert run_explore(client, parse_query(body), 1, [11]).rows[0]["count"] == before + 1


@pytest.mark.parametrize(
    "change",
    [
        {"filters": [{"field": "os", "op": "=", "value": "Windows"}]},  # a field the periods do not keep
        {"group_by": ["transaction"]},
        {"aggregates": [{"fn": "p75", "metric": "dom_ready_ms"}]},  # the facts also take it from spans
        {"aggregates": [{"fn": "max", "metric": "load_time_ms"}]},
        {"aggregates": [{"fn": "unique_users"}]},
        {"interval": "5m"},
        {"filters": [{"field": "tag:region", "op": "=", "value": "eu"}]},
    ],
)
def test_other_questions_keep_the_raw_rows(change: dict[str, Any]) -> None:
    body = {
        "dataset": "pageloads",
        "since": "2026-11-19T00:00:00Z",
        "until": "2026-11-20T00:00:00Z",
        "aggregates": [{"fn": "count"}],
        **change,
    }
    query = parse_query(body)
    assert not pageload_states.qualifies(query)
    statement = table_statement(query, 1, [11], Limits(), 10, states_until=NOW)
    assert "pageload_periods" not in statement.sql and "transactions" in statement.sql


# Aggregates the states do not carry: a question asking them beside carried ones is split.
RAW_ONLY = [
    {"fn": "p95", "metric": "dom_ready_ms"},
    {"fn": "avg", "metric": "dom_ready_ms"},
    {"fn": "max", "metric": "inp_ms"},
    {"fn": "max", "metric": "load_time_ms"},
    {"fn": "min", "metric": "ttfb_ms"},
    {"fn": "unique_users"},
]


def _split_question(rng: random.Random, since: datetime, until: datetime) -> Query:
    """Carried and raw-only aggregates mixed in a random order, ordered by any column (a carried or a raw-only
    aggregate, samples) and cut at a few rows, so the order and the limit decide which groups are shown."""
    aggregates = rng.sample(AGGREGATES, rng.randint(1, 3)) + rng.sample(RAW_ONLY, rng.randint(1, 2))
    rng.shuffle(aggregates)
    body: dict[str, Any] = {
        "dataset": "pageloads",
        "since": since.isoformat().replace("+00:00", "Z"),
        "until": until.isoformat().replace("+00:00", "Z"),
        "aggregates": aggregates,
        "group_by": rng.sample(sorted(pageload_states.FIELDS), rng.randint(0, 2)),
        "filters": rng.sample(FILTERS, rng.randint(0, 2)),
        "limit": rng.choice([1, 3, 1000]),
    }
    interval = rng.choice(["", "1h", "1d", "1w"])
    if interval:
        body["interval"] = interval
    query = parse_query(body)
    order = rng.choice(query.columns[len(query.group_by) :])
    return parse_query({**body, "order_by": rng.choice([order, f"-{order}"])})


def test_split_questions_equal_the_raw_rows(seeded) -> None:
    """A question asking DOM ready, min, max or unique users beside aggregates the states carry reads
    those from the states and only the others from the raw rows: the same groups, order, limit and figures as
    the raw path, whichever column it sorts by."""
    client = seeded
    rng = random.Random(51)
    for _ in range(24):
        until = NOW - timedelta(seconds=rng.randint(0, 3 * 86_400))
        since = until - timedelta(seconds=rng.randint(1_800, 10 * 86_400))
        query = _split_question(rng, since, until)
        assert pageload_states.splits(query) and not pageload_states.qualifies(query)
        assert pageload_states.reads_states(query)
        window = query.window
        span = int((window.until - window.since).total_seconds() // 60)
        cut = rng.choice(
            [window.until + timedelta(days=1), window.since + timedelta(minutes=rng.randint(1, span))]
        )
        for kind in ["table", "series"] if query.interval else ["table"]:
            if kind == "series":
                split, raw = (series_statement(query, 1, [11, 12], Limits(), c) for c in (cut, None))
            else:
                split, raw = (
                    table_statement(query, 1, [11, 12], Limits(), query.limit + 1, states_until=c)
                    for c in (cut, None)
                )
            assert "pageload_periods" in split.sql and "pageload_periods" not in raw.sql
            _same(_rows(client, split), _rows(client, raw))


def test_a_split_question_isolates_organizations(seeded) -> None:
    """Both parts of a split question are scoped to the organization and its projects: another
    organization's page loads are never counted, not even through a project id of theirs."""
    client = seeded
    body: dict[str, Any] = {
        "dataset": "pageloads",
        "range": "30d",
        "group_by": ["page"],
        "aggregates": [
            {"fn": "count"},
            {"fn": "max", "metric": "inp_ms"},
            {"fn": "p75", "metric": "lcp_ms"},
        ],
    }
    query = parse_query(body)
    assert pageload_states.splits(query)
    cut = query.window.until + timedelta(days=1)
    for org, projects in [(1, [11, 12]), (2, [22])]:
        split = _rows(client, table_statement(query, org, projects, Limits(), 1000, states_until=cut))
        raw = _rows(client, table_statement(query, org, projects, Limits(), 1000))
        _same(split, raw)
    # Organization 1 naming organization 2's project reads nothing of it, in either part.
    assert _rows(client, table_statement(query, 1, [22], Limits(), 1000, states_until=cut)) == []
    whole = parse_query({**body, "group_by": []})
    row = _rows(client, table_statement(whole, 1, [22], Limits(), 10, states_until=cut))
    assert [(r["a0"], r["n1"], r["samples"]) for r in row] == [(0, 0, 0)]
