"""Linking StackLens issues to tickets: create (idempotent), link an existing ticket, unlink, list.

Idempotency, step by step (one link per project, issue, connection and target — a unique constraint):

1. A row is written in state ``creating`` with a random ``marker`` and **committed before** the tracker is
   called. A second request (a double click, a retried API call) finds that row: a ``linked`` row is
   answered as it is, a fresh ``creating`` row answers "being created" (409) — neither calls the tracker.
2. The ticket is created with the marker in its description, then the row becomes ``linked`` with the
   ticket's key, URL and state.
3. If the tracker answers a definite refusal (401/403/404/422: nothing was created) the row is deleted: the
   issue is left exactly as before. If the answer is ambiguous (a timeout or a 5xx — the ticket may exist)
   or the process dies between the tracker's answer and step 2, the row stays ``creating``. The next attempt
   (after :data:`LEASE`, or at once after an ambiguous failure) first **searches the tracker for the marker**
   and adopts the ticket it finds; only when none exists does it create one. So a crash never makes two
   tickets, and never leaves a link to a ticket that does not exist.

Every failure writes an activity entry with the tracker's own words.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.control.activity import record_activity
from stacklens.control.db import session_scope
from stacklens.control.integrations import (
    IntegrationInputError,
    IntegrationNotFound,
    get_connection,
    tracker_of,
)
from stacklens.control.models import iso_utc
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.errors import Conflict
from stacklens.integrations.prefill import Draft, document
from stacklens.integrations.trackers.base import Ticket, TrackerError, TrackerRefused
from stacklens.outbound import OutboundClient
from stacklens.settings import Settings

# A "creating" row younger than this is an attempt in flight (a tracker call takes at most ~2 minutes with
# its retries); older, it is an attempt that died and the next one may take over (searching first).
LEASE = timedelta(minutes=3)


class LinkInProgress(Conflict):
    """The same ticket is being created right now by another request."""


class LinkOut(TypedDict):
    """A link as the API answers it and the issue pages show it (:func:`link_out`)."""

    id: int
    integration_id: int
    integration: str  # the connection's name ("" when it is gone)
    type: str  # the tracker: github, jira, …
    issue_id: str
    target: str  # the repository, project or team
    state: str  # creating, linked
    key: str  # the ticket's key, URL and state ("" until linked)
    url: str
    ticket_state: str  # open, closed
    origin: str  # created, linked
    last_error: str  # the last failed read of the ticket's state
    checked_at: str | None
    failures: int
    retry_at: str | None
    created_at: str


@dataclass(frozen=True)
class LinkResult:
    link: LinkOut
    created: bool  # a ticket was made (or adopted) by this call; False: the existing link was returned


def _now() -> datetime:
    return datetime.now(UTC)


def link_out(row: ExternalLink, connection: TrackerConnection | None = None) -> LinkOut:
    return {
        "id": row.id,
        "integration_id": row.connection_id,
        "integration": connection.name if connection else "",
        "type": connection.type if connection else "",
        "issue_id": str(row.issue_id),
        "target": row.target,
        "state": row.state,
        "key": row.ticket_key,
        "url": row.ticket_url,
        "ticket_state": row.ticket_state,
        "origin": row.origin,
        "last_error": row.last_error,
        "checked_at": iso_utc(row.checked_at) if row.checked_at else None,
        "failures": row.failures or 0,
        "retry_at": iso_utc(row.retry_at) if row.retry_at else None,
        "created_at": iso_utc(row.created_at),
    }


def _find(
    session: Session, project_id: int, issue_id: int, connection_id: int, target: str
) -> ExternalLink | None:
    return session.scalars(
        select(ExternalLink).where(
            ExternalLink.project_id == project_id,
            ExternalLink.issue_id == issue_id,
            ExternalLink.connection_id == connection_id,
            ExternalLink.target == target,
        )
    ).first()


def _claim(
    settings: Settings,
    org_id: int,
    project_id: int,
    issue_id: int,
    connection_id: object,
    target: str,
    actor: str,
) -> tuple[LinkOut | None, int, str, bool, str]:
    """Step 1: the existing link (answered as is), or a claimed ``creating`` row: (link, row id, marker,
    resumed, target)."""
    with session_scope(settings) as session:
        connection = get_connection(session, org_id, connection_id)
        target = (target or connection.default_target or "").strip()
        if not target:
            raise IntegrationInputError(
                "target", "choose the repository, project or team to create the ticket in"
            )
        if len(target) > 300:
            raise IntegrationInputError("target", "must be at most 300 characters")
        row = _find(session, project_id, issue_id, connection.id, target)
        if row is not None and row.state == "linked":
            return link_out(row, connection), row.id, row.marker, False, target
        if row is not None:
            if _now() - row.started_at < LEASE:
                raise LinkInProgress(
                    f"a ticket for this issue is being created in {target} since {iso_utc(row.started_at)}; "
                    "reload in a minute"
                )
            # Take over a dead attempt; the compare-and-set on started_at lets only one request win.
            taken = session.execute(
                update(ExternalLink)
                .where(ExternalLink.id == row.id, ExternalLink.started_at == row.started_at)
                .values(started_at=_now())
            )
            if taken.rowcount != 1:  # type: ignore[attr-defined]  # execute() is typed Result; an UPDATE's has rowcount
                raise LinkInProgress(
                    f"a ticket for this issue is being created in {target}; reload in a minute"
                )
            return None, row.id, row.marker, True, target
        marker = "stacklens" + secrets.token_hex(12)
        row = ExternalLink(
            org_id=org_id,
            project_id=project_id,
            issue_id=issue_id,
            connection_id=connection.id,
            target=target,
            state="creating",
            marker=marker,
            origin="created",
            created_by=actor,
        )
        session.add(row)
        try:
            session.flush()
        except IntegrityError as exc:  # a concurrent request inserted the same link first
            raise LinkInProgress(
                f"a ticket for this issue is being created in {target}; reload in a minute"
            ) from exc
        return None, row.id, marker, False, target


def create_link(
    settings: Settings,
    org_id: int,
    project_id: int,
    issue_id: int,
    connection_id: object,
    target: str,
    draft: Draft,
    actor: str = "",
    actor_user_id: int | None = None,
    outbound: OutboundClient | None = None,
) -> LinkResult:
    """Create the ticket for an issue in ``target`` — or return the link that already exists."""
    existing, link_id, marker, resumed, target = _claim(
        settings, org_id, project_id, issue_id, connection_id, target, actor
    )
    if existing is not None:
        return LinkResult(existing, created=False)
    with session_scope(settings) as session:
        connection = get_connection(session, org_id, connection_id)
        tracker = tracker_of(connection, settings, outbound)
        name = connection.name
    try:
        ticket = tracker.find_marker(target, marker) if resumed else None
        if ticket is None:
            ticket = tracker.create(target, draft.title, document(draft, marker))
    except TrackerError as exc:
        _failed(
            settings,
            org_id,
            link_id,
            name,
            target,
            exc,
            actor_user_id,
            definite=isinstance(exc, TrackerRefused),
        )
        raise
    return LinkResult(_store(settings, org_id, link_id, ticket, actor_user_id, "created"), created=True)


def _failed(
    settings: Settings,
    org_id: int,
    link_id: int,
    name: str,
    target: str,
    exc: Exception,
    actor_user_id: int | None,
    definite: bool,
) -> None:
    with session_scope(settings) as session:
        row = session.get(ExternalLink, link_id)
        if row is not None and row.state == "creating":
            if definite:
                session.delete(row)  # nothing was created in the tracker: leave no trace but the log
            else:
                row.last_error = str(exc)[:500]
                row.started_at = _now() - LEASE  # the next attempt searches for the marker at once
        record_activity(
            session,
            org_id,
            "external_link.failed",
            "integration",
            None,
            actor_user_id,
            {"integration": name, "target": target, "error": str(exc)[:500]},
        )


def _store(
    settings: Settings, org_id: int, link_id: int, ticket: Ticket, actor_user_id: int | None, origin: str
) -> LinkOut:
    with session_scope(settings) as session:
        row = session.get(ExternalLink, link_id)
        assert row is not None
        row.state = "linked"
        row.ticket_key, row.ticket_url, row.ticket_state = ticket.key, ticket.url, ticket.state
        row.origin, row.last_error, row.checked_at = origin, "", _now()
        row.failures, row.retry_at = 0, None
        connection = session.get(TrackerConnection, row.connection_id)
        record_activity(
            session,
            org_id,
            f"external_link.{origin}",
            "integration",
            row.connection_id,
            actor_user_id,
            {"issue_id": str(row.issue_id), "ticket": ticket.key, "url": ticket.url},
        )
        session.flush()
        return link_out(row, connection)


def link_existing(
    settings: Settings,
    org_id: int,
    project_id: int,
    issue_id: int,
    connection_id: object,
    reference: str,
    target: str = "",
    actor: str = "",
    actor_user_id: int | None = None,
    outbound: OutboundClient | None = None,
) -> LinkResult:
    """Link a ticket that exists (by URL or key): the tracker is asked for it first, so a typo is refused."""
    if not isinstance(reference, str) or not reference.strip():
        raise IntegrationInputError("reference", "give the ticket's URL or key")
    with session_scope(settings) as session:
        connection = get_connection(session, org_id, connection_id)
        tracker = tracker_of(connection, settings, outbound)
        target = target or connection.default_target
        name = connection.name
    try:
        ticket = tracker.get(reference, target)
    except TrackerError as exc:
        with session_scope(settings) as session:
            record_activity(
                session,
                org_id,
                "external_link.failed",
                "integration",
                None,
                actor_user_id,
                {"integration": name, "reference": reference[:200], "error": str(exc)[:500]},
            )
        raise
    with session_scope(settings) as session:
        row = _find(session, project_id, issue_id, connection.id, ticket.target)
        if row is not None and row.state == "linked" and row.ticket_key == ticket.key:
            return LinkResult(link_out(row, session.get(TrackerConnection, connection.id)), created=False)
        if row is None:
            row = ExternalLink(
                org_id=org_id,
                project_id=project_id,
                issue_id=issue_id,
                connection_id=connection.id,
                target=ticket.target,
                marker="",
                created_by=actor,
            )
            session.add(row)
        row.state = "creating"
        session.flush()
        link_id = row.id
    return LinkResult(_store(settings, org_id, link_id, ticket, actor_user_id, "linked"), created=True)


def unlink(session: Session, org_id: int, link_id: int, actor_user_id: int | None = None) -> None:
    row = session.get(ExternalLink, link_id)
    if row is None or row.org_id != org_id:
        raise IntegrationNotFound(f"no link {link_id} in this organization")
    session.delete(row)
    record_activity(
        session,
        org_id,
        "external_link.removed",
        "integration",
        row.connection_id,
        actor_user_id,
        {"issue_id": str(row.issue_id), "ticket": row.ticket_key},
    )


def links_of_issues(
    session: Session, org_id: int, project_id: int, issue_ids: list[int]
) -> dict[int, list[LinkOut]]:
    """The links of each issue (issue page and list), oldest first, with their connection's name and type."""
    if not issue_ids:
        return {}
    rows = session.scalars(
        select(ExternalLink)
        .where(
            ExternalLink.org_id == org_id,
            ExternalLink.project_id == project_id,
            ExternalLink.issue_id.in_([int(i) for i in issue_ids]),
        )
        .order_by(ExternalLink.id)
    )
    connections = {
        c.id: c for c in session.scalars(select(TrackerConnection).where(TrackerConnection.org_id == org_id))
    }
    out: dict[int, list[LinkOut]] = {}
    for row in rows:
        out.setdefault(int(row.issue_id), []).append(link_out(row, connections.get(row.connection_id)))
    return out
