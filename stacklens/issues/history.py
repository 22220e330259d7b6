"""An issue's history lines (control ``issue_actions``): who assigned, unassigned, merged or split it, and
when.

Each line is also an entry of the organization's activity log, written in the same transaction, so the issue's
timeline and the log never disagree. Callers own the transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import IssueAction, utcnow


def append_history(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    action: str,
    *,
    actor: str,
    actor_user_id: int | None,
    detail: dict[str, Any],
    at: datetime | None = None,
) -> None:
    """One line of the issue's history (``action`` by ``actor`` at ``at``, now by default) and its activity
    entry ``issue.<action>``, whose detail also names the issue, its project and the actor."""
    session.add(
        IssueAction(
            org_id=org_id,
            project_id=project_id,
            issue_id=issue_id,
            at=at or utcnow(),
            actor=actor,
            action=action,
            detail=detail,
        )
    )
    record_activity(
        session,
        org_id,
        f"issue.{action}",
        "issue",
        None,  # issue ids are 52-bit: they go in the detail, the target column is 32-bit
        actor_user_id,
        {**detail, "issue_id": str(issue_id), "project_id": project_id, "actor": actor},
    )
