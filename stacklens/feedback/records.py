"""Feedback kept and read (docs/feedback.md): one row per feedback in the control store, read per project
with the issue of the event it speaks of (:mod:`stacklens.feedback.event_issues`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import UserFeedback, utcnow
from stacklens.feedback.items import FeedbackIn
from stacklens.ingest.clock import kept_under

MAX_ROWS = 1000


@dataclass(frozen=True)
class FeedbackRow:
    """One feedback as the list, the issue page and the replay page show it."""

    id: int
    feedback_id: str
    source: str
    event_id: str
    replay_id: str
    name: str
    email: str
    message: str
    url: str
    release: str
    environment: str
    received_at: datetime


@dataclass(frozen=True)
class FeedbackFilter:
    """What the list keeps: ``event_ids`` (an issue's events, when filtered by issue), ``release``,
    ``has_replay`` (True: only with a replay; False: only without), ``replay_id``."""

    event_ids: frozenset[str] | None = None
    release: str = ""
    has_replay: bool | None = None
    replay_id: str = ""
    limit: int = 100


def record_feedback(
    session: Session,
    org_id: int,
    project_id: int,
    items: Sequence[FeedbackIn],
    received: datetime | None = None,
    retention_days: int = 90,
) -> list[FeedbackRow]:
    """Store each feedback once (a feedback sent again, by its id, is kept once); the rows new here. Each is
    kept under the time it was sent when that is a time an event could be stored under (within
    ``retention_days`` and not ahead of ``received``, as :mod:`stacklens.ingest.clock` decides for events),
    else under ``received``: a widget's feedback sent before a network outage lists when it was written."""
    received = received or utcnow()
    new: list[FeedbackRow] = []
    for item in items:
        exists = session.scalar(
            select(UserFeedback.id).where(
                UserFeedback.project_id == project_id, UserFeedback.feedback_id == item.feedback_id
            )
        )
        if exists is not None:
            continue
        row = UserFeedback(
            org_id=org_id,
            project_id=project_id,
            feedback_id=item.feedback_id,
            source=item.source,
            event_id=item.event_id,
            replay_id=item.replay_id,
            name=item.name,
            email=item.email,
            message=item.message,
            url=item.url,
            release=item.release,
            environment=item.environment,
            received_at=kept_under(item.sent_at, received, retention_days),
        )
        session.add(row)
        session.flush()
        new.append(_row(row))
    return new


def _row(row: UserFeedback) -> FeedbackRow:
    return FeedbackRow(
        row.id,
        row.feedback_id,
        row.source,
        row.event_id,
        row.replay_id,
        row.name,
        row.email,
        row.message,
        row.url,
        row.release,
        row.environment,
        row.received_at,
    )


def feedback_rows(session: Session, org_id: int, project_id: int, where: FeedbackFilter) -> list[FeedbackRow]:
    """The project's feedback, newest first, as ``where`` filters it (never another organization's)."""
    query = select(UserFeedback).where(UserFeedback.org_id == org_id, UserFeedback.project_id == project_id)
    if where.event_ids is not None:
        if not where.event_ids:
            return []
        query = query.where(UserFeedback.event_id.in_(sorted(where.event_ids)))
    if where.release:
        query = query.where(UserFeedback.release == where.release)
    if where.has_replay is True:
        query = query.where(UserFeedback.replay_id != "")
    elif where.has_replay is False:
        query = query.where(UserFeedback.replay_id == "")
    if where.replay_id:
        query = query.where(UserFeedback.replay_id == where.replay_id)
    limit = max(1, min(where.limit, MAX_ROWS))
    query = query.order_by(UserFeedback.received_at.desc(), UserFeedback.id.desc()).limit(limit)
    return [_row(r) for r in session.scalars(query)]


def event_ids_with_feedback(session: Session, org_id: int, project_id: int, limit: int = 5000) -> list[str]:
    """The latest event ids the project's feedback speaks of (to find which of them belong to an issue)."""
    rows = session.scalars(
        select(UserFeedback.event_id)
        .where(
            UserFeedback.org_id == org_id, UserFeedback.project_id == project_id, UserFeedback.event_id != ""
        )
        .order_by(UserFeedback.received_at.desc())
        .limit(limit)
    )
    return list(dict.fromkeys(rows))


def delete_feedback_before(session: Session, project_id: int, before: datetime) -> int:
    """Retention: the project's feedback received before ``before`` deleted; how many."""
    rows = session.scalars(
        select(UserFeedback).where(UserFeedback.project_id == project_id, UserFeedback.received_at < before)
    ).all()
    for row in rows:
        session.delete(row)
    session.flush()
    return len(rows)
