"""Searching a project's log records (the ``logs`` table): filters, one page newest first, the volume chart.

The logs view and ``GET /api/projects/{slug}/logs`` take the same filters, parsed here once so both answer
the same records and refuse the same bad values with the same message (naming the field):

- ``query``: text found (case-insensitively) in the body or any attribute value;
- ``severity``: one or more of trace, debug, info, warn, error, fatal (comma-separated);
- ``service``, ``environment``, ``release``, ``trace_id`` (32 hex digits): exact;
- the window: ``range`` (24h, 7d, 14d, 30d, 90d; default 24h) or ``since``/``until`` (ISO 8601), as the
  performance views take it (:class:`stacklens.view_filters.ViewFilters`).

Pages are ordered by time, newest first, and continue from an opaque cursor (:mod:`stacklens.pagination`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.ingest.logs import LEVELS
from stacklens.pagination import decode_cursor, encode_cursor
from stacklens.view_filters import BadFilter, ViewFilters
from stacklens.warehouse.queries import run_query

DEFAULT_RANGE = "24h"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_CSV_ROWS = 10_000
MAX_QUERY = 256
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
# Chart buckets: the smallest step that gives at most ~60 bars over the window.
_STEPS = (60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400)
_MAX_BARS = 60


@dataclass(frozen=True)
class LogFilters:
    """A validated logs search."""

    window: ViewFilters
    query: str = ""
    severities: tuple[str, ...] = ()
    service: str = ""
    environment: str = ""
    release: str = ""
    trace_id: str = ""

    @classmethod
    def parse(
        cls,
        *,
        query: str = "",
        severity: str = "",
        service: str = "",
        environment: str = "",
        release: str = "",
        trace_id: str = "",
        range: str = "",
        since: str = "",
        until: str = "",
        now: datetime | None = None,
    ) -> LogFilters:
        """Validate raw query-string values; raises :class:`BadFilter` naming the first bad field."""
        window = ViewFilters.parse(
            range=range or ("" if since or until else DEFAULT_RANGE),
            since=since,
            until=until,
            environment=environment,
            release=release,
            now=now,
        )
        if len(query) > MAX_QUERY:
            raise BadFilter("query", f"at most {MAX_QUERY} characters")
        if any(ord(ch) < 32 for ch in query):
            raise BadFilter("query", "control characters are not allowed")
        severities = tuple(dict.fromkeys(s.strip().lower() for s in severity.split(",") if s.strip()))
        for word in severities:
            if word not in LEVELS:
                raise BadFilter("severity", f"{word!r} is not one of {', '.join(LEVELS)}")
        trace = trace_id.strip().lower().replace("-", "")
        if trace and not _HEX32.match(trace):
            raise BadFilter("trace_id", "a trace id is 32 hex digits")
        if len(service) > 256 or any(ord(ch) < 32 for ch in service):
            raise BadFilter("service", "at most 256 characters, no control characters")
        return cls(
            window=window,
            query=query.strip(),
            severities=severities,
            service=service,
            environment=window.environment,
            release=window.release,
            trace_id=trace,
        )

    def sql(self, org_id: int, project_id: int) -> dict[str, Any]:
        """The parameters of the ``log_filter`` macro."""
        return {
            "org_id": org_id,
            "project_id": project_id,
            "since": self.window.since,
            "until": self.window.until,
            "severities": list(self.severities),
            "service": self.service,
            "environment": self.environment,
            "release": self.release,
            "trace_id": self.trace_id,
            "pattern": like_pattern(self.query),
        }

    def params(self) -> dict[str, str]:
        """The filters as query-string values (links that keep the view)."""
        window = self.window.params()
        extra = {
            "query": self.query,
            "severity": ",".join(self.severities),
            "service": self.service,
            "trace_id": self.trace_id,
        }
        return {**window, **{k: v for k, v in extra.items() if v}}

    def describe(self) -> dict[str, Any]:
        """The filters as the API echoes them."""
        window = self.window.describe()
        return {
            "range": window["range"],
            "since": window["since"],
            "until": window["until"],
            "query": self.query,
            "severity": list(self.severities),
            "service": self.service,
            "environment": self.environment,
            "release": self.release,
            "trace_id": self.trace_id,
        }


def like_pattern(text: str) -> str:
    """``%text%`` lower-cased for ``LIKE``, with ``\\``, ``%`` and ``_`` taken literally ('' for no text)."""
    if not text:
        return ""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass(frozen=True)
class LogRecord:
    timestamp: datetime
    observed: datetime
    severity: str
    severity_number: int
    severity_text: str
    body: str
    attributes: dict[str, str]
    trace_id: str
    span_id: str
    service: str
    release: str
    environment: str
    key: str

    def as_dict(self) -> dict[str, Any]:
        """The record as the API answers it (times ISO 8601 UTC with microseconds)."""
        return {
            "timestamp": _iso(self.timestamp),
            "observed_timestamp": _iso(self.observed),
            "severity": self.severity,
            "severity_number": self.severity_number,
            "severity_text": self.severity_text,
            "body": self.body,
            "attributes": self.attributes,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "service": self.service,
            "release": self.release,
            "environment": self.environment,
        }


CSV_COLUMNS = (
    "timestamp",
    "severity",
    "severity_number",
    "body",
    "service",
    "release",
    "environment",
    "trace_id",
    "span_id",
    "attributes",
)


@dataclass(frozen=True)
class LogPage:
    rows: list[LogRecord]
    next_cursor: str | None = None
    filters: LogFilters | None = field(default=None, compare=False)


def search_logs(
    client: Client,
    org_id: int,
    project_id: int,
    filters: LogFilters,
    *,
    cursor: str = "",
    limit: int = DEFAULT_LIMIT,
) -> LogPage:
    """One page of records, newest first; ``next_cursor`` continues it (``None`` on the last page)."""
    if not 1 <= limit <= MAX_CSV_ROWS:
        raise BadFilter("limit", f"from 1 to {MAX_CSV_ROWS}")
    after_ts, after_key = datetime(1970, 1, 1, tzinfo=UTC), ""
    if cursor:
        micros, after_key = decode_cursor(cursor, int, str)
        after_ts = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    params = {
        **filters.sql(org_id, project_id),
        "has_cursor": 1 if cursor else 0,
        "after_ts": after_ts,
        "after_key": after_key,
        "limit": limit + 1,
    }
    rows = [_record(row) for row in run_query(client, "logs/search", params)]
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = encode_cursor(_micros(last.timestamp), last.key)
    return LogPage(rows, next_cursor, filters)


@dataclass(frozen=True)
class VolumeBar:
    bucket: datetime
    severity: str
    records: int


@dataclass(frozen=True)
class Volume:
    step_seconds: int
    bars: list[VolumeBar]


def bucket_seconds(filters: LogFilters) -> int:
    span = (filters.window.until - filters.window.since).total_seconds()
    return next((step for step in _STEPS if span / step <= _MAX_BARS), _STEPS[-1])


def log_volume(client: Client, org_id: int, project_id: int, filters: LogFilters) -> Volume:
    """Records per bucket and severity over the window (empty buckets absent)."""
    step = bucket_seconds(filters)
    params = {**filters.sql(org_id, project_id), "bucket_seconds": step}
    bars = [
        VolumeBar(_utc(row["bucket"]), row["severity"], int(row["records"]))
        for row in run_query(client, "logs/volume", params)
    ]
    return Volume(step, bars)


def log_services(client: Client, org_id: int, project_id: int, filters: LogFilters) -> list[str]:
    """The services that logged in the window, busiest first (the service filter's choices)."""
    params = {
        "org_id": org_id,
        "project_id": project_id,
        "since": filters.window.since,
        "until": filters.window.until,
    }
    return [row["service"] for row in run_query(client, "logs/services", params)]


def trace_logs(
    client: Client, org_id: int, project_id: int, trace_id: str, around: datetime
) -> list[LogRecord]:
    """The records of one trace within a day either side of ``around`` (an event's time), oldest first."""
    around = _utc(around)  # an event row's time is naive UTC
    filters = LogFilters.parse(
        trace_id=trace_id,
        since=_iso(around - timedelta(days=1)),
        until=_iso(around + timedelta(days=1)),
    )
    page = search_logs(client, org_id, project_id, filters, limit=200)
    return list(reversed(page.rows))


def _record(row: dict[str, Any]) -> LogRecord:
    return LogRecord(
        timestamp=_utc(row["timestamp"]),
        observed=_utc(row["observed"]),
        severity=row["severity"],
        severity_number=int(row["severity_number"]),
        severity_text=row["severity_text"],
        body=row["body"],
        attributes=dict(row["attributes"]),
        trace_id=row["trace_id"],
        span_id=row["span_id"],
        service=row["service"],
        release=row["release"],
        environment=row["environment"],
        key=row["dedup_key"],
    )


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _micros(value: datetime) -> int:
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
