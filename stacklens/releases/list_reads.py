"""The release list's reads (:mod:`stacklens.releases.health` assembles and judges them): per release its
session counts and performance figures over the window, its new issues, and — for the releases the window's
start cut — their sessions, page loads and errors over their whole lives to the window's end, what the
verdicts compare (the window's start does not move a verdict: docs/releases.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from clickhouse_connect.driver.client import Client

from stacklens.performance import page_load_reads
from stacklens.releases.impact import ReleaseRow
from stacklens.releases.sessions import SessionCounts, SessionTotals, totals_of, window_counts, window_totals
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.queries import run_query

if TYPE_CHECKING:
    from stacklens.releases.health import Window


def earliest(*moments: datetime | None) -> datetime | None:
    """The earliest of ``moments`` in UTC, leaving out None and the engine's empty value (1970)."""
    found = [m.astimezone(UTC) if m.tzinfo else m.replace(tzinfo=UTC) for m in moments if m is not None]
    found = [m for m in found if m.year > 1970]
    return min(found) if found else None


@dataclass(frozen=True)
class Lifetimes:
    """Per release its session counts from its first session (within the retention) to the window's end —
    what the verdicts compare — for a window that began after the first session of a release it lists."""

    releases: dict[str, SessionCounts]
    window_since: datetime


@dataclass(frozen=True)
class PerformanceReads:
    """The list's performance figures: the window's rows (:func:`performance_read`) and, when a listed
    release began before the window, every release's figures from the earliest such start to the window's end
    (``lived``, :func:`performance_lifetimes`) — what the verdicts compare of the releases that did."""

    rows: list[ReleaseRow]
    lived: dict[str, ReleaseRow] = field(default_factory=dict)
    window_since: datetime | None = None


def new_issue_counts(client: Client, org_id: int, project_id: int) -> dict[str, int]:
    """Per release, the issues first seen in it."""
    rows = run_query(client, "releases/new_issues", {"org_id": org_id, "project_id": project_id})
    return {str(r["release"]): int(r["new_issues"]) for r in rows}


def lifetimes(
    client: Client, org_id: int, project_id: int, span: Window, totals: SessionTotals, environment: str = ""
) -> Lifetimes | None:
    """Per release its session counts from the earliest first session of the releases with sessions in
    ``span`` to its end — each such release's whole life within the retention (one more read of the session
    states); None when none of them began before the window (the window's counts are then those)."""
    starts = [c.first_seen for c in totals.releases.values() if c.sessions and c.first_seen is not None]
    earliest = min(starts, default=None)
    if earliest is None or earliest >= span.since:
        return None
    counts = window_counts(client, org_id, project_id, earliest, span.until, environment)
    return Lifetimes(totals_of(counts, {}).releases, span.since)


def session_reads(
    client: Client, org_id: int, project_id: int, span: Window, environment: str = ""
) -> tuple[SessionTotals, dict[str, int], Lifetimes | None]:
    """The list's reads of the session states and of the issues mart: per release its session counts
    (:func:`window_totals`), its new issues and its sessions to the window's end (:func:`lifetimes`)."""
    totals = window_totals(client, org_id, project_id, span.since, span.until, environment)
    return (
        totals,
        new_issue_counts(client, org_id, project_id),
        lifetimes(client, org_id, project_id, span, totals, environment),
    )


def performance_read(
    client: Client, org_id: int, project_id: int, span: Window, environment: str = ""
) -> list[ReleaseRow]:
    """The list's performance figures: the Release impact view's rows for the window, error-only releases
    included."""
    filters = ViewFilters(since=span.since, until=span.until, environment=environment)
    return page_load_reads.releases(client, org_id, project_id, filters, with_page_loads_only=False)


def performance_lifetimes(
    client: Client,
    org_id: int,
    project_id: int,
    span: Window,
    totals: SessionTotals,
    rows: list[ReleaseRow],
    environment: str = "",
) -> PerformanceReads:
    """The window's performance rows and, when a listed release began before the window (its first session,
    page load or error within the retention), every release's performance figures from the earliest such start
    to the window's end: one more read, what the verdicts compare of those releases."""
    starts = [c.first_seen for c in totals.releases.values() if c.sessions] + [r["first_seen"] for r in rows]
    began = earliest(*starts)
    if began is None or began >= span.since:
        return PerformanceReads(rows)
    whole = ViewFilters(since=began, until=span.until, environment=environment)
    lived = page_load_reads.releases(client, org_id, project_id, whole, with_page_loads_only=False)
    return PerformanceReads(rows, {str(r["release"]): r for r in lived}, span.since)
