"""Logs search against the embedded engine: records landed by the ingest service (log lines, as /api/ingest
takes them) found by text in the body or an attribute value, severity, service and trace, newest first with
a cursor that neither skips nor repeats ties; the chart's buckets by severity, empty buckets absent; and the
filters' refusals naming the field."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.ingest.prepared_rows import Attribution
from stacklens.ingest.service import ingest_batch
from stacklens.logs.search import (
    LogFilters,
    bucket_seconds,
    like_pattern,
    log_services,
    log_volume,
    search_logs,
)
from stacklens.settings import Settings
from stacklens.view_filters import BadFilter
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations

KEY = "stacklens_app_LOGSEARCH000000000000000000"
NOW = datetime.now(UTC).replace(microsecond=0)
TRACE = "0af7651916cd43dd8448eb211c80319c"


def _line(minutes_ago: float, level: str, body: str, **extra: object) -> bytes:
    payload = {"timestamp": (NOW - timedelta(minutes=minutes_ago)).timestamp(), "level": level, "body": body}
    payload.update(extra)
    return json.dumps({"v": 1, "type": "log", "app_key": KEY, "payload": payload}).encode()


@pytest.fixture
def landed(settings: Settings) -> Settings:
    apply_migrations(settings, up_to=99)
    lines = [
        _line(1, "error", "payment failed for order 42", trace_id=TRACE, service="billing"),
        _line(2, "info", "order 42 created", trace_id=TRACE, service="shop"),
        _line(
            3, "warn", "slow query", attributes={"db.statement": "SELECT * FROM Orders_2025"}, service="shop"
        ),
        _line(50, "debug", "100% done", service="shop"),
    ]
    # Three records at the same instant: paging must split the tie by key.
    lines += [_line(90, "info", f"tick {i}", service="cron") for i in range(3)]
    result = ingest_batch(
        settings,
        5,
        b"\n".join(lines),
        header_app_key=None,
        idempotency_key=None,
        resolve=lambda raw: Attribution(8, None, 1) if raw == KEY else None,
        take_events=lambda n: None,
    )
    assert (result.accepted, result.rejected) == (7, [])
    return settings


def _bodies(settings: Settings, **filters: str) -> list[str]:
    page = search_logs(
        get_warehouse(settings), 5, 8, LogFilters.parse(**filters, now=NOW + timedelta(minutes=1))
    )
    return [r.body for r in page.rows]


def test_filters_find_records_newest_first(landed: Settings) -> None:
    assert _bodies(landed)[:4] == [
        "payment failed for order 42",
        "order 42 created",
        "slow query",
        "100% done",
    ]
    assert _bodies(landed, query="ORDER 42") == ["payment failed for order 42", "order 42 created"]
    assert _bodies(landed, query="orders_2025") == ["slow query"], "an attribute value matches"
    assert _bodies(landed, query="100%") == ["100% done"], "% is taken literally"
    assert _bodies(landed, query="0_d") == [], "_ is taken literally"
    assert _bodies(landed, severity="error,warn") == ["payment failed for order 42", "slow query"]
    assert _bodies(landed, service="shop", severity="info") == ["order 42 created"]
    assert _bodies(landed, trace_id=TRACE.upper()) == ["payment failed for order 42", "order 42 created"]
    assert _bodies(landed, range="24h", service="nobody") == []
    services = log_services(get_warehouse(landed), 5, 8, LogFilters.parse(now=NOW + timedelta(minutes=1)))
    assert services == ["cron", "shop", "billing"], "busiest first, then by name"
    assert search_logs(get_warehouse(landed), 5, 9, LogFilters.parse()).rows == [], "another project: none"
    assert search_logs(get_warehouse(landed), 6, 8, LogFilters.parse()).rows == [], "another org: none"


def test_cursor_pages_through_ties(landed: Settings) -> None:
    client = get_warehouse(landed)
    filters = LogFilters.parse(service="cron", now=NOW + timedelta(minutes=1))
    seen: list[str] = []
    cursor = ""
    for _ in range(5):
        page = search_logs(client, 5, 8, filters, cursor=cursor, limit=1)
        seen += [r.body for r in page.rows]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sorted(seen) == ["tick 0", "tick 1", "tick 2"]


def test_volume_buckets_by_severity_without_empty_ones(landed: Settings) -> None:
    filters = LogFilters.parse(range="24h", now=NOW + timedelta(minutes=1))
    assert bucket_seconds(filters) == 1800
    volume = log_volume(get_warehouse(landed), 5, 8, filters)
    by = {(bar.bucket, bar.severity): bar.records for bar in volume.bars}
    assert sum(by.values()) == 7
    assert sum(n for (_, sev), n in by.items() if sev == "info") == 4
    # Only buckets with records: the half hours the records fall in (three, or four when a half hour starts
    # between the newest records' minutes), none of the day's empty ones.
    ages = (1, 2, 3, 50, 90)
    held = {int((NOW - timedelta(minutes=age)).timestamp()) // 1800 * 1800 for age in ages}
    assert {bucket for bucket, _ in by} == {datetime.fromtimestamp(start, UTC) for start in held}


def test_bad_filters_name_the_field() -> None:
    for field, kwargs in (
        ("severity", {"severity": "loud"}),
        ("trace_id", {"trace_id": "xyz"}),
        ("range", {"range": "3y"}),
        ("query", {"query": "a" * 300}),
        ("since", {"since": "yesterday"}),
    ):
        with pytest.raises(BadFilter, match=field):
            LogFilters.parse(**kwargs)
    assert like_pattern("") == "" and like_pattern("A_b%") == "%a\\_b\\%%"


def test_logs_are_an_explore_dataset(landed: Settings) -> None:
    from stacklens.explore.query_parser import parse_query
    from stacklens.explore.run import run_explore

    window = {
        "since": (NOW - timedelta(days=1)).isoformat().replace("+00:00", "Z"),
        "until": (NOW + timedelta(minutes=5)).isoformat().replace("+00:00", "Z"),
    }
    query = parse_query(
        {
            "dataset": "logs",
            **window,
            "filters": [{"field": "severity", "op": "in", "value": ["info", "error"]}],
            "group_by": ["service"],
            "aggregates": [{"fn": "count", "metric": "log_records"}],
        }
    )
    result = run_explore(get_warehouse(landed), query, 5, [8])
    counts = {row[result.columns[0]]: row[result.columns[1]] for row in result.rows}
    assert counts == {"cron": 3, "shop": 1, "billing": 1}
    by_attribute = parse_query(
        {"dataset": "logs", **window, "group_by": ["tag:db.statement"], "aggregates": [{"fn": "count"}]}
    )
    rows = run_explore(get_warehouse(landed), by_attribute, 5, [8]).rows
    assert {tuple(r.values())[:2] for r in rows} == {("", 6), ("SELECT * FROM Orders_2025", 1)}
