"""The seeded worlds the reads' tests check against polars over the raw rows (fixtures ``reads_world`` and
``cut_world`` in conftest.py): one organization's page loads with another organization's under the same
project id, which no read of the first may count, and the windows that cut hours and days — whose whole
days come from the day states, other whole hours from the hour states and partial edge hours from the
minute states."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from clickhouse_connect.driver.client import Client

from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import Seeded, migrated, seed

# reads_world: a two-week window of page loads (pages, weeks, releases, resources, endpoints, recommendations,
# waterfalls).
ORG, OTHER, PROJECT = 5, 6, 50
# cut_world: the windows below.
CUT_ORG, CUT_OTHER, CUT_PROJECT = 7, 8, 70
WINDOWS = [
    (
        "2026-11-06T12:17:30Z",
        "2026-11-19T09:42:10Z",
    ),  # whole days, whole hours and partial hours on both sides
    ("2026-11-18T03:20:00Z", "2026-11-18T22:05:00Z"),  # whole hours inside one day, no whole day
    ("2026-11-19T10:05:00Z", "2026-11-19T10:55:00Z"),  # inside one hour: minutes alone
]
AROUND_A_LOAD = ("", "")  # the 20 minutes around a page load, inside its hour: minutes alone, with data
# The windows the views' figures are checked over (the slowest calls: over every window).
CUT_CASES = [*WINDOWS[:2], AROUND_A_LOAD]


def close(a: float | None, b: float | None) -> bool:
    """Within 1 % (a percentile from the merged histograms against the exact one), or both missing."""
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9)


def two_organizations(
    settings: Settings,
    org_id: int,
    other_id: int,
    project_id: int,
    loads: tuple[int, int],
    seeds: tuple[int, int],
) -> tuple[Client, Seeded]:
    """A migrated warehouse with ``loads[0]`` page loads of ``org_id`` and ``loads[1]`` of ``other_id``
    under the same project id; the client and ``org_id``'s raw rows."""
    client = migrated(settings)
    data = seed(client, org_id, project_id, loads=loads[0], seed=seeds[0], facts=False)
    seed(client, other_id, project_id, loads=loads[1], seed=seeds[1])
    return client, data


def cut_filters(data: Seeded, window: tuple[str, str], browser: str = "") -> ViewFilters:
    """The filters of one of WINDOWS, or of AROUND_A_LOAD: the minutes 10 to 50 of an hour with a page load at
    minute 20 to 40."""
    if window == AROUND_A_LOAD:
        load = next(t["timestamp"] for t in data.transactions if 20 <= t["timestamp"].minute < 40)
        start = load.replace(minute=10, second=0, microsecond=0)
        window = (
            start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            start.replace(minute=50).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
    return ViewFilters.parse(
        since=window[0], until=window[1], browser=browser, now=datetime(2026, 11, 20, 12, tzinfo=UTC)
    )


def cut_spans(data: Seeded, window: tuple[str, str], op: str) -> tuple[ViewFilters, pl.DataFrame]:
    """The filters of ``window`` (:func:`cut_filters`) and the raw spans of ``op`` in it."""
    filters = cut_filters(data, window)
    return filters, window_spans(data, filters).filter(pl.col("op") == op)


def window_spans(data: Seeded, filters: ViewFilters) -> pl.DataFrame:
    """The raw spans in the filters' window and environment."""
    return pl.DataFrame(
        [
            s
            for s in data.spans
            if filters.since <= s["timestamp"] < filters.until
            and filters.environment in ("", s["environment"])
        ]
    )
