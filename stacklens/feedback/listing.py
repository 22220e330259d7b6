"""The feedback list of a project (docs/feedback.md): the stored feedback with the issue of the event each
speaks of, filtered by issue, release and whether a replay was recorded; what the API, the feedback page, the
issue page and the replay page show."""

from __future__ import annotations

from dataclasses import dataclass

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import EventAttachment
from stacklens.feedback.event_issues import issues_of_events
from stacklens.feedback.records import FeedbackFilter, FeedbackRow, event_ids_with_feedback, feedback_rows


@dataclass(frozen=True)
class FeedbackItem:
    """One feedback with the issue of its event (None: no event, or not stored yet) and the ids of the files
    sent with it (the widget's screenshot)."""

    row: FeedbackRow
    issue_id: int | None
    attachment_ids: tuple[str, ...] = ()


def feedback_list(
    session: Session,
    client: Client,
    org_id: int,
    project_id: int,
    *,
    issue_id: int | None = None,
    release: str = "",
    has_replay: bool | None = None,
    replay_id: str = "",
    limit: int = 100,
) -> list[FeedbackItem]:
    """The project's feedback, newest first, as filtered."""
    event_ids: frozenset[str] | None = None
    if issue_id is not None:
        candidates = event_ids_with_feedback(session, org_id, project_id)
        issues = issues_of_events(client, org_id, project_id, candidates)
        event_ids = frozenset(e for e, i in issues.items() if i == issue_id)
    rows = feedback_rows(
        session, org_id, project_id, FeedbackFilter(event_ids, release, has_replay, replay_id, limit)
    )
    if issue_id is not None:
        issues = {r.event_id: issue_id for r in rows}
    else:
        issues = issues_of_events(client, org_id, project_id, [r.event_id for r in rows if r.event_id])
    files: dict[str, list[str]] = {}
    if rows:
        found = session.execute(
            select(EventAttachment.event_id, EventAttachment.id).where(
                EventAttachment.org_id == org_id,
                EventAttachment.project_id == project_id,
                EventAttachment.event_id.in_([r.feedback_id for r in rows]),
            )
        )
        for event_id, attachment_id in found:
            files.setdefault(event_id, []).append(attachment_id)
    return [FeedbackItem(r, issues.get(r.event_id), tuple(files.get(r.feedback_id, ()))) for r in rows]
