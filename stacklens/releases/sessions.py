"""Reads of the session states (``session_periods``): per release over a window with its adoption and first
seen, one release over time, and the environments sessions came from. Named queries in
``warehouse_sql/queries/releases``; the client is passed in.

Counting (Relay's, docs/releases.md): a session counts in the period of its start, once; errored sessions
include crashed and abnormal ones; users are distinct user ids (uniqCombined64 states of precision 12:
exact up to about 128 a state, about 2 % low beyond); a session without a user id counts no user."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.releases.periods import DAY, HOUR, tile
from stacklens.warehouse.queries import run_query

ADOPTION_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class SessionCounts:
    """What one release's sessions count over a window (and its adoption over the 24 hours before its end)."""

    sessions: int = 0
    errored: int = 0
    crashed: int = 0
    abnormal: int = 0
    users: int = 0
    errored_users: int = 0
    crashed_users: int = 0
    recent_sessions: int = 0
    recent_users: int = 0
    first_seen: datetime | None = None


@dataclass(frozen=True)
class SessionTotals:
    """Per release its counts, and the totals of every release (the denominators of adoption)."""

    releases: dict[str, SessionCounts]
    total: SessionCounts


def utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _first(value: Any) -> datetime | None:
    """A first session start, or None for the engine's empty value (no day row)."""
    if value is None:
        return None
    moment = utc(value)
    return None if moment.year <= 1970 else moment


def _counts(row: dict[str, Any], first_seen: datetime | None) -> SessionCounts:
    return SessionCounts(
        sessions=int(row["sessions"]),
        errored=int(row["errored"]),
        crashed=int(row["crashed"]),
        abnormal=int(row["abnormal"]),
        users=int(row["users"]),
        errored_users=int(row["errored_users"]),
        crashed_users=int(row["crashed_users"]),
        recent_sessions=int(row["recent_sessions"]),
        recent_users=int(row["recent_users"]),
        first_seen=first_seen,
    )


def window_counts(
    client: Client, org_id: int, project_id: int, since: datetime, until: datetime, environment: str = ""
) -> list[dict[str, Any]]:
    """The rows of queries/releases/sessions.sql: per release (and '' for the total of every release) its
    counts in [since, until) and its sessions and users in the 24 hours before ``until``; one read of the
    states."""
    parameters = {
        "org_id": org_id,
        "project_id": project_id,
        "environment": environment,
        "periods": tile(since, until),
        "recent": tile(until - ADOPTION_WINDOW, until),
    }
    return run_query(client, "releases/sessions", parameters)


def first_sessions(
    client: Client, org_id: int, project_id: int, environment: str = ""
) -> dict[str, datetime]:
    """Per release its first session start within the retention (whatever the window)."""
    parameters = {"org_id": org_id, "project_id": project_id, "environment": environment}
    found = {
        str(r["release"]): _first(r["first_seen"])
        for r in run_query(client, "releases/first_sessions", parameters)
    }
    return {release: first for release, first in found.items() if first is not None}


def totals_of(counts: list[dict[str, Any]], first_seen: dict[str, datetime]) -> SessionTotals:
    """:class:`SessionTotals` from the two reads (:func:`window_counts`, :func:`first_sessions`): every
    release with sessions in the window, or ever within the retention."""
    releases = {
        str(r["release"]): _counts(r, first_seen.get(str(r["release"]))) for r in counts if r["release"] != ""
    }
    total = next((_counts(r, None) for r in counts if r["release"] == ""), SessionCounts())
    for release, first in first_seen.items():
        if release not in releases:
            releases[release] = SessionCounts(first_seen=first)
    return SessionTotals(releases, total)


def window_totals(
    client: Client, org_id: int, project_id: int, since: datetime, until: datetime, environment: str = ""
) -> SessionTotals:
    """Per release (with sessions in the window, or ever within the retention) its counts in [since, until),
    its sessions and users in the 24 hours before ``until`` and its first session start; two reads."""
    return totals_of(
        window_counts(client, org_id, project_id, since, until, environment),
        first_sessions(client, org_id, project_id, environment),
    )


@dataclass(frozen=True)
class Bucket:
    """One hour or day of a release: its sessions, page loads and errors (0 where it had none of a kind)."""

    start: datetime
    sessions: int = 0
    errored: int = 0
    crashed: int = 0
    users: int = 0
    crashed_users: int = 0
    page_loads: int = 0
    load_p75: float | None = None
    errors: int = 0

    @property
    def crash_free_sessions(self) -> float | None:
        return 100.0 * (1 - self.crashed / self.sessions) if self.sessions else None

    @property
    def crash_free_users(self) -> float | None:
        return 100.0 * (1 - self.crashed_users / self.users) if self.users else None

    @property
    def errors_per_1k_page_loads(self) -> float | None:
        return 1000.0 * self.errors / self.page_loads if self.page_loads else None


def bucket_size(since: datetime, until: datetime) -> timedelta:
    """Hours for a span of up to 3 days (at most 72 points), days beyond."""
    return HOUR if until - since <= timedelta(days=3) else DAY


def series(
    client: Client,
    org_id: int,
    project_id: int,
    release: str,
    since: datetime,
    until: datetime,
    environment: str = "",
) -> tuple[timedelta, list[Bucket]]:
    """``(bucket size, buckets)`` of one release over [since, until): only the buckets with data (a chart
    draws the others as gaps)."""
    size = bucket_size(since, until)
    parameters = {
        "org_id": org_id,
        "project_id": project_id,
        "release": release,
        "environment": environment,
        "since": since,
        "until": until,
        "bucket_seconds": int(size.total_seconds()),
        "periods": tile(since, until, blocks=False, whole=size),
    }
    merged: dict[datetime, dict[str, Any]] = {}
    for row in run_query(client, "releases/series", parameters):
        values = merged.setdefault(utc(row["bucket"]), {})
        if row["kind"] == "sessions":
            for key in ("sessions", "errored", "crashed", "users", "crashed_users"):
                values[key] = int(row[key])
        elif row["kind"] == "pageloads":
            values["page_loads"] = int(row["views"])
            load = row["load_p75"]
            values["load_p75"] = None if load is None or load != load else float(load)
        else:
            values["errors"] = int(row["errors"])
    return size, [Bucket(start, **values) for start, values in sorted(merged.items())]


def environments(client: Client, org_id: int, project_id: int) -> list[str]:
    """The environments of the project's sessions (most sessions first)."""
    rows = run_query(client, "releases/environments", {"org_id": org_id, "project_id": project_id})
    return [str(row["environment"]) for row in rows]
