"""Reading tickets' states back (the ``integrations`` pipeline, every 10 minutes) and, where a connection
asks for it, resolving the StackLens issue when its ticket closes.

The resolve goes through the issue workflow (:mod:`stacklens.issues.actions`), so only a legal transition is
made and it is recorded in the issue's history with the actor ``integration:<connection name>``. A ticket
that closes while the issue is already resolved or ignored changes nothing.

Each link is its own item (:mod:`stacklens.isolation`): whatever reading one link raises — a refusal, a
tracker that does not answer, an answer of the wrong shape, a defect — is noted on that link (``last_error``,
shown on the issue page), logged in the activity log once per new error, and the link is tried again after
the outbox's backoff (``retry_at``); the other links, of every organization, are read as usual. The tracker
is called outside any transaction, and each link's outcome is committed on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.db import session_scope
from stacklens.control.integrations import tracker_of
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.integrations.trackers.base import Ticket, Tracker, TrackerUnavailable
from stacklens.isolation import failure_text, is_shared_outage, retry_at
from stacklens.issues.actions import StatusRequest, apply_status
from stacklens.outbound import OutboundClient
from stacklens.settings import Settings
from stacklens.tenant_pool import Tenant, by_tenant, run_per_tenant

BATCH = 500  # links read per run; the oldest-checked first, so every link is read within a few runs


@dataclass
class SyncSummary:
    checked: int = 0
    changed: int = 0
    resolved: int = 0
    failed: int = 0
    # Links left for the next run because their tracker did not answer this run (one timeout per
    # connection per run, not one per link: 500 links behind a dead host would hold the run for hours), or
    # their organization's budget for this run was spent.
    deferred: int = 0
    errors: list[str] = field(default_factory=list)

    def merge(self, other: SyncSummary) -> None:
        """Add one organization's figures (each task counts its own)."""
        self.checked += other.checked
        self.changed += other.changed
        self.resolved += other.resolved
        self.failed += other.failed
        self.deferred += other.deferred
        self.errors += other.errors


@dataclass(frozen=True)
class _Due:
    link_id: int
    connection_id: int
    ticket_key: str
    target: str
    org_id: int


def _due(session: Session, now: datetime) -> list[_Due]:
    rows = session.scalars(
        select(ExternalLink)
        .where(
            ExternalLink.state == "linked",
            or_(ExternalLink.retry_at.is_(None), ExternalLink.retry_at <= now),
        )
        .order_by(ExternalLink.checked_at.is_not(None), ExternalLink.checked_at, ExternalLink.id)
        .limit(BATCH)
    )
    return [_Due(r.id, r.connection_id, r.ticket_key, r.target, r.org_id) for r in rows]


def _trackers(
    session: Session, settings: Settings, ids: set[int], outbound: OutboundClient | None
) -> dict[int, Tracker | Exception]:
    """Each connection's client, or why it cannot be built (a token that no longer decrypts): that
    connection's links fail with it, the others go on."""
    out: dict[int, Tracker | Exception] = {}
    for connection in session.scalars(select(TrackerConnection).where(TrackerConnection.id.in_(ids))):
        try:
            out[connection.id] = tracker_of(connection, settings, outbound)
        except Exception as exc:  # noqa: BLE001 - one connection's problem is its links' error
            out[connection.id] = exc
    return out


def sync_states(
    settings: Settings,
    client: Client,
    outbound: OutboundClient | None = None,
    now: datetime | None = None,
) -> SyncSummary:
    summary = SyncSummary()
    now = now or datetime.now(UTC)
    with session_scope(settings) as session:
        due = _due(session, now)
        trackers = _trackers(session, settings, {d.connection_id for d in due}, outbound)

    # One task per organization (stacklens.tenant_pool): a tracker that answers slowly, or drips its answer,
    # holds its own organization's reads for at most the organization's budget, never the others'.
    def read_tenant(tenant: Tenant[_Due]) -> SyncSummary:
        own = SyncSummary()
        unanswered: dict[int, str] = {}  # connection id -> why its tracker did not answer this run
        for link in tenant.items:
            if link.connection_id in unanswered or tenant.out_of_time():
                own.deferred += 1
                continue
            own.checked += 1
            try:
                tracker = trackers.get(link.connection_id) or LookupError("the connection no longer exists")
                if isinstance(tracker, Exception):
                    raise tracker
                # The connection is this organization's alone: its client takes the organization's budget.
                tracker.outbound = tracker.outbound.until(tenant.not_after)
                ticket = tracker.get(link.ticket_key, link.target)
                _read(settings, client, link.link_id, ticket, now, own)
            except Exception as exc:
                if is_shared_outage(exc):
                    raise  # the warehouse or the control store is down: nobody's link, the run's failure
                message = failure_text(exc, f"the state read of ticket {link.ticket_key}")
                if isinstance(exc, TrackerUnavailable):
                    unanswered[link.connection_id] = message
                _failed(settings, link, message, now, own)
        return own

    for part in run_per_tenant(by_tenant(due, lambda d: d.org_id), read_tenant):
        summary.merge(part)
    return summary


def _read(
    settings: Settings, client: Client, link_id: int, ticket: Ticket, now: datetime, summary: SyncSummary
) -> None:
    """Record a successful read; a state change is logged and may resolve the issue, in one transaction (a
    resolve that fails leaves the state unread, so the next read tries the resolve again)."""
    with session_scope(settings) as session:
        row = session.get(ExternalLink, link_id)
        if row is None or row.state != "linked":
            return  # unlinked while the tracker answered
        row.checked_at, row.last_error, row.failures, row.retry_at = now, "", 0, None
        if ticket.state == row.ticket_state:
            return
        connection = session.get(TrackerConnection, row.connection_id)
        previous, row.ticket_state = row.ticket_state, ticket.state
        record_activity(
            session,
            row.org_id,
            f"external_link.{ticket.state}",
            "integration",
            row.connection_id,
            None,
            {"ticket": row.ticket_key, "issue_id": str(row.issue_id), "from": previous},
        )
        if ticket.state == "closed" and previous == "open" and connection and connection.resolve_on_close:
            refused = apply_status(
                client,
                row.org_id,
                row.project_id,
                int(row.issue_id),
                StatusRequest("resolved"),
                f"integration:{connection.name}",
            )
            if refused is None:
                summary.resolved += 1
        summary.changed += 1


def _failed(settings: Settings, link: _Due, message: str, now: datetime, summary: SyncSummary) -> None:
    summary.failed += 1
    summary.errors.append(f"{link.ticket_key}: {message}")
    with session_scope(settings) as session:
        row = session.get(ExternalLink, link.link_id)
        if row is None:
            return
        if row.last_error != message:
            record_activity(
                session,
                row.org_id,
                "external_link.sync_failed",
                "integration",
                row.connection_id,
                None,
                {"ticket": row.ticket_key, "error": message},
            )
        row.last_error = message
        row.failures = (row.failures or 0) + 1
        row.retry_at = retry_at(row.failures, now)
