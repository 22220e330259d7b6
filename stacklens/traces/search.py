"""Searching a project's traces (docs/traces.md): the traces holding at least one span — a transaction's
root span or a span under one, from any source — that matches every filter given, newest match first.

Filters (``GET /api/projects/{slug}/traces`` and the trace search page parse them here once, so both refuse
the same values with the same message naming the field): ``service`` (the service name, or the project's
slug for spans that named none), ``operation`` (a span's op such as ``http.server`` or ``db``, or its name:
the transaction name or span description), ``min_duration`` / ``max_duration`` (ms, of that span),
``status`` (``ok``, ``error`` or one span status such as ``internal_error``), ``release``, ``environment``
and the window (``range`` 24h … 90d, default 24h, or ``since``/``until``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.view_filters import BadFilter, ViewFilters
from stacklens.warehouse.queries import run_query

DEFAULT_RANGE = "24h"
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# Matching spans read per source before grouping them into traces: first a few per trace wanted (a selective
# search, about one matching span per trace, stops in the newest granules holding matches instead of reading
# the window's every span), then, when those held fewer traces than wanted, enough for a page of traces even
# when each has dozens of matching spans.
FIRST_SCAN_PER_TRACE = 4
SCAN_PER_TRACE = 40
_MAX_TEXT = 256
_MAX_DURATION = 1e12  # ms; "no upper bound"


def _text(name: str, value: str) -> str:
    text = value.strip()
    if len(text) > _MAX_TEXT or any(ord(ch) < 32 for ch in text):
        raise BadFilter(name, f"at most {_MAX_TEXT} characters, no control characters")
    return text


def _duration(name: str, value: str) -> float | None:
    if not value.strip():
        return None
    try:
        number = float(value)
    except ValueError:
        raise BadFilter(name, f"{value!r} is not a number of milliseconds") from None
    if not math.isfinite(number) or number < 0:
        raise BadFilter(name, "a number of milliseconds, 0 or more")
    return number


@dataclass(frozen=True)
class TraceFilters:
    """A validated trace search."""

    window: ViewFilters
    service: str = ""
    operation: str = ""
    min_duration: float | None = None
    max_duration: float | None = None
    status: str = ""
    release: str = ""
    environment: str = ""

    @classmethod
    def parse(
        cls,
        *,
        service: str = "",
        operation: str = "",
        min_duration: str = "",
        max_duration: str = "",
        status: str = "",
        release: str = "",
        environment: str = "",
        range: str = "",
        since: str = "",
        until: str = "",
        now: datetime | None = None,
    ) -> TraceFilters:
        """Validate raw query-string values; raises :class:`BadFilter` naming the first bad field."""
        window = ViewFilters.parse(
            range=range,
            since=since,
            until=until,
            environment=environment,
            release=release,
            now=now,
            default=DEFAULT_RANGE,
        )
        low, high = _duration("min_duration", min_duration), _duration("max_duration", max_duration)
        if low is not None and high is not None and high < low:
            raise BadFilter("max_duration", "must not be below min_duration")
        word = _text("status", status).lower()
        if word and not word.replace("_", "").isalpha():
            raise BadFilter("status", "ok, error or a span status such as internal_error")
        return cls(
            window=window,
            service=_text("service", service),
            operation=_text("operation", operation),
            min_duration=low,
            max_duration=high,
            status=word,
            release=window.release,
            environment=window.environment,
        )

    def params(self) -> dict[str, str]:
        """The filters as query-string values (links that keep the search); empty ones left out."""
        values = {
            **self.window.params(),
            "service": self.service,
            "operation": self.operation,
            "min_duration": "" if self.min_duration is None else f"{self.min_duration:g}",
            "max_duration": "" if self.max_duration is None else f"{self.max_duration:g}",
            "status": self.status,
        }
        return {k: v for k, v in values.items() if v}

    def sql(self, org_id: int, project_id: int, project_slug: str) -> dict[str, Any]:
        return {
            "org_id": org_id,
            "project_id": project_id,
            "since": self.window.since,
            "until": self.window.until,
            "service": self.service,
            "project_named": int(bool(self.service) and self.service == project_slug),
            "operation": self.operation,
            "min_duration": self.min_duration or 0.0,
            "max_duration": _MAX_DURATION if self.max_duration is None else self.max_duration,
            "status": self.status,
            "release": self.release,
            "environment": self.environment,
        }


@dataclass(frozen=True)
class TraceSummary:
    """One trace found: where it starts, how long it lasts, what it holds."""

    trace_id: str
    start: datetime
    duration_ms: float
    spans: int
    matching_spans: int
    services: list[str]
    root: str  # the earliest transaction's name
    root_op: str
    failed_spans: int
    errors: int
    releases: list[str]
    last_match: datetime


def search_traces(
    client: Client,
    org_id: int,
    project_id: int,
    filters: TraceFilters,
    project_names: dict[int, str],
    limit: int = DEFAULT_LIMIT,
) -> list[TraceSummary]:
    """The traces of the project matching ``filters``, newest match first (at most ``limit``)."""
    params = filters.sql(org_id, project_id, project_names.get(project_id, ""))
    found = _matching(client, params, limit)
    if not found:
        return []
    ids = [r["trace_id"] for r in found]
    # The traces' spans are read a day around their matches (the queries widen the bounds by a day), not
    # around the whole window: a search of 7 days answered from the last hour reads two days, not nine.
    matched = [_utc(r["last_match"]) for r in found]
    window = {"org_id": org_id, "trace_ids": ids, "since": min(matched), "until": max(matched)}
    summaries = {r["trace_id"]: r for r in run_query(client, "traces/summaries", window)}
    errors = {r["trace_id"]: int(r["errors"]) for r in run_query(client, "traces/error_counts", window)}
    out = []
    for match in found:
        tid = match["trace_id"]
        row = summaries.get(tid)
        if row is None:
            continue
        names = []
        for pid, service, browser in row["services"]:
            if int(pid) not in project_names:
                continue
            # Named as the trace names them (stacklens.traces.tree.build_tree).
            name = service or project_names[int(pid)] + (" (browser)" if browser else "")
            if name not in names:
                names.append(name)
        out.append(
            TraceSummary(
                trace_id=tid,
                start=datetime.fromtimestamp(int(row["start_ms"]) / 1000.0, UTC),
                duration_ms=float(row["end_ms"]) - float(row["start_ms"]),
                spans=int(row["spans"]),
                matching_spans=int(match["matching_spans"]),
                services=sorted(names),
                root=row["root_name"],
                root_op=row["root_op"],
                failed_spans=int(row["failed_spans"]),
                errors=errors.get(tid, 0),
                releases=sorted(row["releases"]),
                last_match=_utc(match["last_match"]),
            )
        )
    return out


def _matching(client: Client, params: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """The traces with the newest matching spans. The traces a scan finds are the newest there are (a trace
    left out has all its matches older than every scanned one); a short answer from a scan that may have
    stopped early is read again with the larger scan."""
    scan = max(limit, 1) * FIRST_SCAN_PER_TRACE
    found = run_query(client, "traces/search", {**params, "limit": limit, "scan": scan})
    if len(found) < limit and sum(int(r["matching_spans"]) for r in found) >= scan:
        found = run_query(
            client, "traces/search", {**params, "limit": limit, "scan": max(limit, 1) * SCAN_PER_TRACE}
        )
    return found


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
