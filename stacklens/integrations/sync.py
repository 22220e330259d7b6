"""Reading tickets' states back (the ``integrations`` pipeline, every 10 minutes) and, where a connection
asks for it, resolving the StackLens issue when its ticket closes.

The resolve goes through the issue workflow (:mod:`stacklens.issues.actions`), so only a legal transition is
made and it is recorded in the issue's history with the actor ``integration:<connection name>``. A ticket
that closes while the issue is already resolved or ignored changes nothing. A tracker that fails is noted on
the link (shown on the issue page) and in the activity log once per new error, not on every tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client
from sqlalchemy import select

from stacklens.control.activity import record_activity
from stacklens.control.db import session_scope
from stacklens.control.integration_models import ExternalLink, TrackerConnection
from stacklens.control.integrations import tracker_of
from stacklens.control.keys import KeyDecryptionError
from stacklens.integrations.trackers.base import TrackerError
from stacklens.issues.actions import StatusRequest, apply_status
from stacklens.outbound import OutboundClient
from stacklens.settings import Settings

BATCH = 500  # links read per run; the oldest-checked first, so every link is read within a few runs


@dataclass
class SyncSummary:
    checked: int = 0
    changed: int = 0
    resolved: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def sync_states(settings: Settings, client: Client, outbound: OutboundClient | None = None) -> SyncSummary:
    summary = SyncSummary()
    with session_scope(settings) as session:
        rows = list(
            session.scalars(
                select(ExternalLink)
                .where(ExternalLink.state == "linked")
                .order_by(ExternalLink.checked_at.is_not(None), ExternalLink.checked_at)
                .limit(BATCH)
            )
        )
        connections = {
            c.id: c
            for c in session.scalars(
                select(TrackerConnection).where(TrackerConnection.id.in_({r.connection_id for r in rows}))
            )
        }
        for row in rows:
            connection = connections[row.connection_id]
            summary.checked += 1
            try:
                # Built per link (cheap) so a token that no longer decrypts fails its links, not the run.
                ticket = tracker_of(connection, settings, outbound).get(row.ticket_key, row.target)
            except (TrackerError, KeyDecryptionError) as exc:
                summary.failed += 1
                message = str(exc)[:500]
                summary.errors.append(f"{row.ticket_key}: {message}")
                if row.last_error != message:
                    record_activity(
                        session,
                        row.org_id,
                        "external_link.sync_failed",
                        "integration",
                        connection.id,
                        None,
                        {"ticket": row.ticket_key, "error": message},
                    )
                row.last_error = message
                continue
            row.checked_at, row.last_error = datetime.now(UTC), ""
            if ticket.state == row.ticket_state:
                continue
            summary.changed += 1
            previous, row.ticket_state = row.ticket_state, ticket.state
            record_activity(
                session,
                row.org_id,
                f"external_link.{ticket.state}",
                "integration",
                connection.id,
                None,
                {"ticket": row.ticket_key, "issue_id": str(row.issue_id), "from": previous},
            )
            if ticket.state == "closed" and previous == "open" and connection.resolve_on_close:
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
    return summary
