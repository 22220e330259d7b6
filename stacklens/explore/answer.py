"""The JSON answer of an Explore query (``POST /api/explore/query``, ``stacklens sql``): the shapes the server
builds (:mod:`stacklens.explore.run`) and the notebook client (:mod:`stacklens.client`) reads. Nothing but
typing here, so the client imports it without the server's dependencies."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

# One row of the table: a JSON value (stacklens.explore.run.plain_value's) per column. The columns are the
# query's group-by fields, aggregates and ``samples`` (an operator statement's own columns): named by the
# user's question, so the keys are not fixed.
ExploreRow = dict[str, Any]


class SeriesLine(TypedDict):
    """One group of the table as a time series: only the buckets that hold rows, so a gap stays a gap."""

    group: ExploreRow  # the group-by fields' values (empty without a group-by)
    t: list[str]  # the buckets' starts, ISO 8601 (UTC as Z)
    samples: list[int]  # rows per bucket
    values: dict[str, list[Any]]  # per aggregate column, its value in each bucket
    counts: dict[str, list[int]]  # per aggregate over a metric, the values each bucket's figure summarises


class AnswerMeta(TypedDict):
    rows_read: int  # rows the engine read from storage (the table's and the series' reads)
    elapsed_ms: float
    truncated: bool  # the table (or the series) was cut at its limit
    # With "compare": {"previous_release": true}: the release compared with (null: none was first seen before
    # it).
    compared_release: NotRequired[str | None]


class ExploreAnswer(TypedDict):
    columns: list[str]
    rows: list[ExploreRow]
    series: list[SeriesLine]
    meta: AnswerMeta
