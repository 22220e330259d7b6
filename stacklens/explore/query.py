"""An Explore query as a typed spec (:class:`Query`: its filters, aggregates and comparison) and the words and
limits of the query language. :mod:`stacklens.explore.query_parser` parses and validates the JSON body of
``POST /api/explore/query`` (and the page's query string) into it; a bad one raises :class:`BadQuery`
naming the field, function or value."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.errors import InvalidInput
from stacklens.explore.datasets import Dataset
from stacklens.metrics.catalog import get
from stacklens.metrics.formatting import column_name
from stacklens.view_filters import ViewFilters

OPS = ("=", "!=", "in", "contains", ">=", "<")
STRING_OPS = ("=", "!=", "in", "contains")
NUMBER_OPS = ("=", "!=", "in", ">=", "<")
PERCENTILES = {"p50": 0.5, "p75": 0.75, "p90": 0.9, "p95": 0.95, "p99": 0.99}
VALUE_FNS = ("avg", "sum", "min", "max", *PERCENTILES)
FNS = ("count", "unique_users", "rate_per_1k", *VALUE_FNS)
INTERVALS: dict[str, timedelta] = {
    "5m": timedelta(minutes=5),
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "1d": timedelta(days=1),
    "1w": timedelta(weeks=1),
}
# A chart of more points than this is unreadable and costs a long answer: 90 days at 5 minutes is 25,920.
MAX_BUCKETS = 5_000
MAX_GROUP_BY = 3
MAX_FILTERS = 20
MAX_AGGREGATES = 10
MAX_IN_VALUES = 100
MAX_VALUE_LENGTH = 256
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000  # rows of a JSON answer; downloads (csv, parquet, json) stream up to DOWNLOAD_LIMIT
DOWNLOAD_LIMIT = 1_000_000
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
TAG_KEY = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")
KNOWN_KEYS = (
    "dataset",
    "project",
    "filters",
    "group_by",
    "aggregates",
    "interval",
    "range",
    "since",
    "until",
    "order_by",
    "limit",
    "compare",
)


class BadQuery(InvalidInput):
    """A query that cannot run; the message names the field (and the function or value) at fault."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.field = name


@dataclass(frozen=True)
class Filter:
    field: str  # a dataset field or ``tag:<key>``
    op: str
    value: str | float | tuple[str, ...] | tuple[float, ...]


@dataclass(frozen=True)
class Aggregate:
    fn: str
    metric: str  # a catalog key ('' for count and unique_users of rows)

    @property
    def column(self) -> str:
        if self.fn == "unique_users":
            return "unique_users"
        if self.fn == "rate_per_1k":
            return column_name("error_events", "rate_per_1k")
        if self.fn == "count":
            if not self.metric:
                return "count"
            # A metric that is a count (sessions, users, page loads) is named as the catalog names it.
            counting = get(self.metric).fixed_statistic
            return column_name(self.metric, "count") if counting else f"count_{self.metric}"
        return column_name(self.metric, self.fn)


@dataclass(frozen=True)
class Compare:
    """What an answer is compared with (``"compare"`` of the body): the previous window of the same length, a
    chosen one, or — ``previous_release`` — the same window with the query's release filter set to the release
    first seen before it ("release N against N−1"; the window is then the query's own)."""

    previous_period: bool
    since: datetime
    until: datetime
    previous_release: bool = False

    def as_body(self) -> dict[str, Any]:
        if self.previous_release:
            return {"previous_release": True}
        if self.previous_period:
            return {"previous_period": True}
        return {"since": _iso(self.since), "until": _iso(self.until)}


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Query:
    dataset: Dataset
    project: str  # a project slug; '' = every project of the organization
    window: ViewFilters
    filters: tuple[Filter, ...]
    group_by: tuple[str, ...]
    aggregates: tuple[Aggregate, ...]
    interval: str
    order_by: str
    descending: bool
    limit: int
    compare: Compare | None = None

    def as_body(self) -> dict[str, Any]:
        """The JSON body this query was parsed from, normalised (what a saved query or a URL keeps)."""
        body: dict[str, Any] = {
            "dataset": self.dataset.key,
            "project": self.project,
            "filters": [
                {
                    "field": f.field,
                    "op": f.op,
                    "value": list(f.value) if isinstance(f.value, tuple) else f.value,
                }
                for f in self.filters
            ],
            "group_by": list(self.group_by),
            "aggregates": [{"fn": a.fn, "metric": a.metric} for a in self.aggregates],
            "interval": self.interval,
            "order_by": ("-" if self.descending else "") + self.order_by,
            "limit": self.limit,
        }
        if self.window.range:
            body["range"] = self.window.range
        else:
            body["since"] = self.window.since.isoformat().replace("+00:00", "Z")
            body["until"] = self.window.until.isoformat().replace("+00:00", "Z")
        if self.compare is not None:
            body["compare"] = self.compare.as_body()
        return body

    @property
    def columns(self) -> list[str]:
        return [*self.group_by, *(a.column for a in self.aggregates), "samples"]


def release_filter(filters: tuple[Filter, ...]) -> Filter | None:
    """The query's one ``release = <version>`` filter (what "release N against N−1" compares), else None."""
    found = [f for f in filters if f.field == "release"]
    if len(found) == 1 and found[0].op == "=" and isinstance(found[0].value, str) and found[0].value:
        return found[0]
    return None
