"""Compare an Explore answer with another window's (docs/explore.md: ``"compare": {"previous_period": true}``
or
``{"since", "until"}``) or with the release before the one it filters on (``{"previous_release": true}``):
beside each aggregate column its value in the other window (``<column>_previous``) and the change in per cent
(``<column>_change_pct``), row by row (rows are matched on their group-by values).

Both values come from the same query run twice by :func:`stacklens.explore.run.run_explore`, so each is
exactly what the query answers for that window alone."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.explore.answer import ExploreRow
from stacklens.explore.query import MAX_LIMIT, Query, release_filter
from stacklens.explore.run import Result, run_explore
from stacklens.releases.predecessor import predecessor
from stacklens.view_filters import ViewFilters

PREVIOUS = "_previous"
CHANGE = "_change_pct"


def previous_window(query: Query) -> tuple[datetime, datetime]:
    """The window of the same length just before the query's."""
    span = query.window.until - query.window.since
    return query.window.since - span, query.window.since


def in_window(query: Query, window: tuple[datetime, datetime]) -> Query:
    """The query over another window (its table only matters: every group, so a row finds its match)."""
    return replace(
        query,
        window=ViewFilters(since=window[0], until=window[1]),
        limit=MAX_LIMIT,
        interval="",
        compare=None,
    )


def change_pct(current: Any, previous: Any) -> float | None:
    """The change from ``previous`` to ``current`` in per cent; None when either is missing or previous is
    0."""
    if not isinstance(current, int | float) or not isinstance(previous, int | float) or previous == 0:
        return None
    return round((current - previous) / abs(previous) * 100, 2)


def merge(query: Query, current: list[ExploreRow], previous: list[ExploreRow]) -> list[ExploreRow]:
    """Each current row with ``<column>_previous`` and ``<column>_change_pct`` beside each aggregate
    column."""
    by_key = {tuple(row[g] for g in query.group_by): row for row in previous}
    out = []
    for row in current:
        before = by_key.get(tuple(row[g] for g in query.group_by), {})
        merged = dict(row)
        for aggregate in query.aggregates:
            column = aggregate.column
            merged[column + PREVIOUS] = before.get(column)
            merged[column + CHANGE] = change_pct(row.get(column), before.get(column))
        out.append(merged)
    return out


def compared_columns(query: Query) -> list[str]:
    out = list(query.group_by)
    for aggregate in query.aggregates:
        out += [aggregate.column, aggregate.column + PREVIOUS, aggregate.column + CHANGE]
    return [*out, "samples"]


def run_compared(
    client: Client, query: Query, org_id: int, project_ids: list[int]
) -> tuple[Result, Result | None]:
    """The query's answer — with its ``compare``, the compared columns in its rows — and the other window's
    own answer (None without ``compare``)."""
    current = run_explore(client, query, org_id, project_ids)
    if query.compare is None:
        return current, None
    window = (query.compare.since, query.compare.until)
    # With an interval the other window's series too: the chart overlays it, shifted onto the query's window.
    earlier = replace(in_window(query, window), interval=query.interval)
    if query.compare.previous_release:
        chosen = release_filter(query.filters)
        version = str(chosen.value) if chosen else ""
        before = predecessor(client, org_id, project_ids, version)
        current.compared_with, current.release_compared = before or "", True
        if before is None:
            # The first release has nothing before it: no previous value and no change, rather than a guess.
            current.rows = merge(query, current.rows, [])
            current.columns = compared_columns(query)
            return current, None
        earlier = replace(
            earlier, filters=tuple(replace(f, value=before) if f is chosen else f for f in query.filters)
        )
    previous = run_explore(client, earlier, org_id, project_ids, series=bool(query.interval))
    current.rows = merge(query, current.rows, previous.rows)
    current.columns = compared_columns(query)
    current.rows_read += previous.rows_read
    current.elapsed_ms = round(current.elapsed_ms + previous.elapsed_ms, 1)
    return current, previous
