"""The page-load reads' rows (stacklens/performance/page_load_rows.py): each read's rows hold the keys
their type declares, the keys the views, the exports and the release pages read them by."""

from __future__ import annotations

from collections.abc import Mapping

from stacklens.performance import page_load_reads
from stacklens.performance.page_load_rows import DayRow, PageRow, PageTotals, WeekRow
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW
from tests.stacklens.performance.read_worlds import ORG, PROJECT


def _holds_its_keys(row: Mapping[str, object], shape: type) -> bool:
    keys = set(row)
    return set(shape.__required_keys__) <= keys <= set(shape.__required_keys__) | set(shape.__optional_keys__)  # type: ignore[attr-defined]


def test_every_read_row_holds_the_keys_of_its_type(reads_world) -> None:
    client, _ = reads_world
    filters = ViewFilters.parse(range="14d", now=NOW)
    total, rows = page_load_reads.pages(client, ORG, PROJECT, filters)
    assert total is not None and rows
    assert _holds_its_keys(total, PageTotals)
    assert all(_holds_its_keys(row, PageRow) for row in rows)
    days = page_load_reads.daily(client, ORG, PROJECT, filters)
    assert days and all(_holds_its_keys(row, DayRow) for row in days)
    weeks = page_load_reads.weekly(client, ORG, PROJECT, filters)
    assert weeks and all(_holds_its_keys(row, WeekRow) for row in weeks)
