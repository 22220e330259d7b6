"""Reads of one issue's raw events: latest, one by id, older / newer, history pages, counts over time.

Each query filters on the issue's fingerprint as well as its id, so it runs on the events sort key
``(project_id, fingerprint, timestamp)`` rather than scanning the project.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict, cast

from clickhouse_connect.driver.client import Client

from stacklens.issues.reads import BadListRequest
from stacklens.pagination import InvalidCursor, decode_cursor, encode_cursor
from stacklens.warehouse.queries import run_query

HISTORY_PAGE = 25
EPOCH = datetime(1970, 1, 1)
# An open end reaches this far past now (UTC), so events stamped ahead by a skewed client clock still show.
OPEN_END = timedelta(days=366)


class EventRow(TypedDict):
    """One stored event (events/get.sql): its indexed fields and its scrubbed payload, as JSON text
    (:func:`stacklens.issues.payload_view.load_payload` reads it)."""

    event_id: str
    issue_id: int
    timestamp: datetime
    received_at: datetime
    environment: str
    release: str
    service: str
    level: str
    platform: str
    title: str
    culprit: str
    payload: str


class HistoryRow(TypedDict):
    """One occurrence of an issue's event history (events/history.sql)."""

    event_id: str
    timestamp: datetime
    user_id: str
    user_email: str
    user_name: str
    user_ip: str
    environment: str
    release: str
    service: str
    server_name: str
    transaction: str
    request_method: str
    request_url: str
    browser_name: str
    browser_version: str
    os_name: str
    os_version: str
    level: str


class EventBucket(TypedDict):
    """One bar of the events-over-time chart: the bucket's start (UTC) and its events."""

    bucket: datetime
    events: int


@dataclass(frozen=True)
class EventLocation:
    """Where an event of an organization lives (events/find.sql)."""

    event_id: str
    project_id: int
    issue_id: int
    fingerprint: str
    timestamp: datetime


def event_window(
    since: datetime | None, until: datetime | None, now: datetime | None = None
) -> dict[str, datetime]:
    """The query bounds for an optional [since, until]: naive UTC, as the warehouse stores timestamps. An open
    start is the epoch; an open end is a year past ``now`` (a timedelta, so 29 February has no special
    case)."""
    current = (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
    return {"since": since or EPOCH, "until": until or current + OPEN_END}


def valid_event_id(value: str) -> str | None:
    """The canonical form of an event id (hex with or without dashes), or ``None`` when it is not one."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        return None


class IssueEvents:
    """Event reads scoped to one issue of one project of one organization."""

    def __init__(
        self,
        client: Client,
        org_id: int,
        project_id: int,
        issue_id: int,
        fingerprint: str,
        merged: bool | None = None,
    ) -> None:
        """``fingerprint`` is the issue's own (the ``issues`` mart's). An issue can hold merged fingerprints
        (:mod:`stacklens.issues.merges`) whose events the reads cover too: ``merged`` says whether it does (a
        caller with the control store knows), ``None`` asks the warehouse for the issue's fingerprints."""
        self.client = client
        self.base: dict[str, Any] = {"org_id": org_id, "project_id": project_id, "issue_id": issue_id}
        if merged is None or merged:
            rows = run_query(self.client, "events/fingerprints", self.base)
            self.base["fingerprints"] = [str(r["fingerprint"]) for r in rows] or [fingerprint]
            return
        if not fingerprint:
            rows = run_query(self.client, "events/fingerprint", self.base)
            fingerprint = rows[0]["fingerprint"] if rows else ""
        self.base["fingerprints"] = [fingerprint]

    def _window(self, since: datetime | None, until: datetime | None) -> dict[str, datetime]:
        return event_window(since, until)

    def latest(self, since: datetime | None = None, until: datetime | None = None) -> str | None:
        rows = run_query(self.client, "events/latest", {**self.base, **self._window(since, until)})
        return str(rows[0]["event_id"]) if rows else None

    def get(self, event_id: str) -> EventRow | None:
        canonical = valid_event_id(event_id)
        if canonical is None:
            return None
        rows = run_query(self.client, "events/get", {**self.base, "event_id": canonical})
        if not rows:
            return None
        row = rows[0]
        row["event_id"] = str(row["event_id"])
        return cast(EventRow, row)  # the columns events/get.sql names, the id as text

    def neighbours(
        self, event: EventRow, since: datetime | None = None, until: datetime | None = None
    ) -> tuple[str | None, str | None]:
        """(newer, older) event ids next to ``event``."""
        rows = run_query(
            self.client,
            "events/neighbours",
            {
                **self.base,
                **self._window(since, until),
                "ts": event["timestamp"],
                "event_id": event["event_id"],
            },
        )
        row = rows[0] if rows else {}
        return (row.get("newer") or None, row.get("older") or None)

    def history(
        self,
        cursor: str = "",
        limit: int = HISTORY_PAGE,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> tuple[list[HistoryRow], str | None]:
        """One page of occurrences, newest first, and the next page's cursor."""
        cursor_ts, cursor_id = EPOCH, ""
        if cursor:
            try:
                value, key = decode_cursor(cursor, float, str)
                if valid_event_id(key) is None:
                    raise InvalidCursor()
            except InvalidCursor as exc:
                raise BadListRequest(str(exc)) from exc
            cursor_ts, cursor_id = EPOCH + timedelta(milliseconds=value), key
        found = run_query(
            self.client,
            "events/history",
            {
                **self.base,
                **self._window(since, until),
                "cursor_ts": cursor_ts,
                "cursor_id": cursor_id,
                "limit": limit + 1,
            },
        )
        for row in found:
            row["event_id"] = str(row["event_id"])
        rows = cast(list[HistoryRow], found)  # the columns events/history.sql names, the ids as text
        next_cursor = None
        if len(rows) > limit:
            rows = rows[:limit]
            last = rows[-1]
            millis = (last["timestamp"] - EPOCH) // timedelta(milliseconds=1)
            next_cursor = encode_cursor(millis, last["event_id"])
        return rows, next_cursor

    def over_time(self, since: datetime, until: datetime) -> list[EventBucket]:
        """Events per bucket over [since, until) (the window's closed-open edges,
        stacklens.metrics.windows), every bucket present (zero where nothing happened)."""
        bucket = bucket_seconds(since, until)
        rows = run_query(
            self.client,
            "issues/events_over_time",
            {**self.base, "since": since, "until": until, "bucket_seconds": bucket},
        )
        return fill_buckets(rows, since, until, bucket)


def fill_buckets(
    rows: list[dict[str, Any]], since: datetime, until: datetime, bucket: int
) -> list[EventBucket]:
    """Every bucket starting in [since, until) with its count, zero where the query had no row.

    Without the empty buckets a chart cannot tell "nothing happened" from "no data": one bucket becomes a
    hairline and two far-apart buckets become wide blocks. Buckets start at multiples of ``bucket`` seconds
    since the epoch, as ClickHouse's ``toStartOfInterval`` makes them.
    """
    counts: dict[int, int] = {}
    for row in rows:
        start = row["bucket"]
        start = start.replace(tzinfo=UTC) if start.tzinfo is None else start
        counts[int(start.timestamp())] = int(row["events"])
    first = int(since.timestamp()) // bucket * bucket
    last = int(until.timestamp())
    return [
        {"bucket": datetime.fromtimestamp(moment, UTC), "events": counts.get(moment, 0)}
        for moment in range(first, last, bucket)
    ]


def bucket_seconds(since: datetime, until: datetime) -> int:
    """The chart's bar width: about 60-100 bars whatever the range (5 minutes over a few hours, an hour
    over a few days, a day over months)."""
    span = (until - since).total_seconds()
    return 300 if span <= 6 * 3600 else 3600 if span <= 4 * 86400 else 86400


def find_event(client: Client, org_id: int, project_ids: list[int], event_id: str) -> EventLocation | None:
    """Where an event of the organization lives (project, issue), or ``None``."""
    canonical = valid_event_id(event_id)
    if canonical is None or not project_ids:
        return None
    where = {"org_id": org_id, "project_ids": project_ids, "event_id": canonical}
    rows = run_query(client, "events/find", where)
    if not rows:
        return None
    row = rows[0]
    return EventLocation(
        event_id=str(row["event_id"]),
        project_id=int(row["project_id"]),
        issue_id=int(row["issue_id"]),
        fingerprint=str(row["fingerprint"]),
        timestamp=row["timestamp"],
    )
