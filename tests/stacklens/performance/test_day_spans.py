"""Periods of the state tables (their `grain`, migration 0148): a window's whole hours are read as the
fewest hours, days and aligned blocks of days that tile them, and the blocks give exactly what the days
they hold give — also after a late tick refreshes one of their days."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from stacklens.performance import endpoint_reads, page_load_reads
from stacklens.view_filters import DAY_SPANS, EPOCH, GRAIN_MINUTES, ViewFilters, tile_days
from stacklens.warehouse.queries import run_query
from tests.stacklens.performance.perf_seed import NOW, TX_COLS, build_facts, migrated, seed

ORG, PROJECT = 5, 50


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-10-21", "2026-11-20"),
        ("2026-11-07", "2026-11-19"),
        ("2026-11-18", "2026-11-19"),
        ("2026-11-18", "2026-11-18"),
    ],
)
def test_whole_days_tile_into_the_fewest_aligned_blocks(start: str, end: str) -> None:
    blocks = tile_days(_day(start), _day(end))
    day = _day(start)
    for span, first in blocks:  # contiguous, each on a multiple of its span since 1970-01-01
        assert first == day and span in DAY_SPANS and (first - EPOCH).days % span == 0
        day += timedelta(days=span)
    assert day == _day(end) or (not blocks and start == end)
    assert len(blocks) <= 8
    assert tile_days(_day(start), _day(end), (1,)) == [
        (1, _day(start) + timedelta(days=i)) for i in range((_day(end) - _day(start)).days)
    ]


def test_a_30_day_window_reads_blocks_not_days() -> None:
    filters = ViewFilters.parse(range="30d", now=NOW + timedelta(minutes=30))
    periods = filters.periods()["periods"]
    days = [(grain, start) for grain, start in periods if grain.startswith("day")]
    assert 1 < len(days) <= 8 and max(GRAIN_MINUTES[grain] for grain, _ in days) == GRAIN_MINUTES["days_16"]
    # the whole days; the partial first and last from hours
    assert sum(GRAIN_MINUTES[grain] for grain, _ in days) == 29 * GRAIN_MINUTES["day"]
    hours = sorted(start for grain, start in periods if grain == "hour")
    bounds = filters.whole_hours()
    assert (
        len(hours) == 23
        and hours[0] == bounds["whole_start"]
        and hours[-1] == bounds["whole_end"] - timedelta(hours=1)
    )
    per_day = filters.periods(per_day=True)["periods"]
    assert sorted(g for g, _ in per_day if g != "hour") == ["day"] * 29 and len(per_day) == 29 + 23
    assert ViewFilters.parse(since="2026-11-19T10:05:00Z", until="2026-11-19T10:55:00Z").periods() == {
        "periods": []
    }


@pytest.mark.parametrize(
    ("since", "until", "minutes"),
    [
        ("2026-11-06T12:17:30Z", "2026-11-19T09:42:10Z", 43 + 43),  # edge minutes of both partial hours
        ("2026-11-19T10:05:00Z", "2026-11-19T10:55:00Z", 50),  # inside one hour: minutes only
        ("2026-11-19T10:30:00Z", "2026-11-19T11:20:00Z", 50),  # across an hour, no whole hour: minutes only
        ("2026-11-06T00:00:00Z", "2026-11-08T00:00:00Z", 0),  # whole days: no minute
    ],
)
def test_minute_periods_tile_the_whole_window(since: str, until: str, minutes: int) -> None:
    filters = ViewFilters.parse(since=since, until=until)
    periods = filters.periods(minutes=True)["periods"]
    spans = sorted((start, start + timedelta(minutes=GRAIN_MINUTES[grain])) for grain, start in periods)
    assert sum(1 for grain, _ in periods if grain == "minute") == minutes
    assert spans[0][0] == filters.since and spans[-1][1] == filters.until
    assert all(a[1] == b[0] for a, b in pairwise(spans))  # no gap, no overlap
    assert [p for p in periods if p[0] != "minute"] == filters.periods()["periods"]


@pytest.fixture
def world(settings):
    client = migrated(settings)
    data = seed(client, ORG, PROJECT, loads=300, seed=5, days=30)
    return client, data


def _by_day(client, filters: ViewFilters, per_day: bool) -> dict[tuple[str, str, str], dict]:
    """The endpoints view's rows read through blocks (the view) or through single days."""
    params = {
        **filters.sql(ORG, PROJECT),
        **filters.periods(per_day=per_day, minutes=True),
        **endpoint_reads.NO_ENDPOINT,
    }
    return {
        (r["source"], r["method"], r["path"]): r for r in run_query(client, "performance/endpoints", params)
    }


def test_blocks_give_what_their_days_give_also_after_a_late_tick(world) -> None:
    client, data = world
    filters = ViewFilters.parse(range="30d", now=NOW)
    blocks, days = _by_day(client, filters, False), _by_day(client, filters, True)
    assert blocks and blocks.keys() == days.keys()
    for key, row in blocks.items():
        assert row["calls"] == days[key]["calls"] and row["s5xx"] == days[key]["s5xx"]
        assert row["p95_ms"] == pytest.approx(days[key]["p95_ms"], rel=1e-9)
        assert row["avg_ms"] == pytest.approx(days[key]["avg_ms"], rel=1e-9)

    # A server transaction that arrives late for a day 20 days back: the tick that refreshes that day's hours
    # refreshes the blocks holding it, so the 30-day window counts it once.
    late = next(t for t in data.transactions if t["op"] == "http.server")
    when = (NOW - timedelta(days=20)).replace(hour=5, minute=30)
    row = {**late, "event_id": uuid.uuid4(), "timestamp": when, "end_timestamp": when, "http_status": 503}
    client.insert("transactions", [[row[c] for c in TX_COLS]], column_names=TX_COLS)
    build_facts(client, when.replace(minute=0), when.replace(minute=0) + timedelta(hours=1))
    after = _by_day(client, filters, False)

    def server(rows: dict, field: str) -> int:
        return sum(r[field] for k, r in rows.items() if k[0] == "server")

    assert server(after, "calls") == server(blocks, "calls") + 1
    assert server(after, "s5xx") == server(blocks, "s5xx") + 1
    assert server(after, "calls") == server(_by_day(client, filters, True), "calls")
    view = endpoint_reads.endpoints(client, ORG, PROJECT, filters)
    assert sum(r["calls"] for r in view if r["source"] == "server") == server(after, "calls")


def _pages(client, filters: ViewFilters, per_day: bool, page: str = "") -> dict[str, dict]:
    """The page table's rows (and the project's, key '') read through blocks of days (the view) or single
    days."""
    params = page_load_reads.load_params(ORG, PROJECT, filters, page, per_day=per_day)
    return {r["page"] if not r["is_total"] else "": r for r in run_query(client, "performance/pages", params)}


def _samples(client, filters: ViewFilters, per_day: bool, page: str) -> dict:
    params = page_load_reads.load_params(ORG, PROJECT, filters, page, per_day=per_day)
    return run_query(client, "performance/samples", params)[0]


def test_page_load_blocks_give_what_their_days_give_also_after_a_late_tick(world) -> None:
    client, data = world
    filters = ViewFilters.parse(range="30d", now=NOW)
    blocks, days = _pages(client, filters, False), _pages(client, filters, True)
    assert len(blocks) > 2 and blocks.keys() == days.keys()
    for key, row in blocks.items():
        for field in ("views", "ttfb_n", "lcp_n", "cls_n", "score_n"):
            assert row[field] == days[key][field], (key, field)
        for field in ("load_avg", "load_p75", "ttfb_p75", "lcp_p75", "cls_p75", "score_mean"):
            assert row[field] == pytest.approx(days[key][field], rel=1e-9, nan_ok=True), (key, field)
    page = max((k for k in blocks if k), key=lambda k: blocks[k]["views"])
    assert _samples(client, filters, False, page) == _samples(client, filters, True, page)

    # A page load that arrives late for a day 20 days back, slower than any other: the tick that refreshes
    # that day's hours refreshes the blocks holding it, so the 30-day window counts it once and lists it
    # slowest.
    late = next(t for t in data.transactions if t["op"] == "pageload" and t["page"] == page)
    when = (NOW - timedelta(days=20)).replace(hour=5, minute=30)
    row = {
        **late,
        "event_id": uuid.uuid4(),
        "timestamp": when,
        "end_timestamp": when,
        "duration_ms": 99_000.0,
    }
    client.insert("transactions", [[row[c] for c in TX_COLS]], column_names=TX_COLS)
    build_facts(client, when.replace(minute=0), when.replace(minute=0) + timedelta(hours=1))
    after = _pages(client, filters, False)
    assert after[page]["views"] == blocks[page]["views"] + 1 == _pages(client, filters, True)[page]["views"]
    assert after[""]["views"] == blocks[""]["views"] + 1
    slowest = _samples(client, filters, False, page)["slowest"]
    assert slowest[0][0] == 99_000.0 and slowest[0][1] == str(row["event_id"])
