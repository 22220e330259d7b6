"""An issue's history as one story in time order: status changes (warehouse ``issue_history``), assignments,
merges and splits (control ``issue_actions``) and comments (control ``issue_comments``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import IssueAction
from stacklens.issues.comments import CommentRow, list_comments
from stacklens.issues.reads import status_history


@dataclass(frozen=True)
class TimelineItem:
    kind: str  # "status" | "assigned" | "unassigned" | "comment" | "merged" | "merged_into" | "split"
    at: datetime
    actor: str
    status: dict[str, Any] | None = None  # the issue_history row of a status change
    assignee: str = ""
    rule: str = ""
    comment: CommentRow | None = None
    # A merge's or split's issue ids ("merged", "into", "from", "issues") and fingerprints, as recorded.
    detail: dict[str, Any] | None = None


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def timeline(
    session: Session, client: Client, org_id: int, project_id: int, issue_id: int
) -> list[TimelineItem]:
    """Everything that happened to the issue, oldest first (ties: status, then assignment, then comment)."""
    items: list[tuple[datetime, int, TimelineItem]] = []
    for row in status_history(client, org_id, project_id, issue_id):
        at = _utc(row["at"])
        items.append((at, 0, TimelineItem("status", at, str(row["actor"]), status=row)))
    actions = session.scalars(
        select(IssueAction).where(
            IssueAction.org_id == org_id,
            IssueAction.project_id == project_id,
            IssueAction.issue_id == issue_id,
        )
    )
    for action in actions:
        at = _utc(action.at)
        detail = action.detail or {}
        items.append(
            (
                at,
                1,
                TimelineItem(
                    action.action,
                    at,
                    action.actor,
                    assignee=str(detail.get("assignee", "")),
                    rule=str(detail.get("rule", "")),
                    detail=detail,
                ),
            )
        )
    for comment in list_comments(session, org_id, project_id, issue_id):
        at = _utc(comment.created_at)
        items.append((at, 2, TimelineItem("comment", at, comment.author, comment=comment)))
    items.sort(key=lambda item: (item[0], item[1]))
    return [item for _, _, item in items]
