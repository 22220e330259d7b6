"""Feedback and attachments leave with their events (docs/feedback.md): the retention run deletes, per
project, those received before its retention (the project's days, else ``STACKLENS_RETENTION_DAYS``), the
attachments' files with their rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Project
from stacklens.feedback.attachment_files import delete_attachments_before
from stacklens.feedback.records import delete_feedback_before
from stacklens.settings import Settings


@dataclass
class Removed:
    attachments: int = 0
    feedback: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"attachments_deleted": self.attachments, "feedback_deleted": self.feedback}


def remove_expired(
    settings: Settings, session: Session, days_of: dict[int, int | None], now: datetime
) -> Removed:
    """For every project of the installation: its feedback and attachments past its retention deleted
    (``days_of``: project id → its own days, absent or None for the installation's)."""
    removed = Removed()
    for project_id in session.scalars(select(Project.id)):
        days = days_of.get(project_id) or settings.retention_days
        before = now - timedelta(days=days)
        removed.attachments += delete_attachments_before(settings, session, project_id, before)
        removed.feedback += delete_feedback_before(session, project_id, before)
    return removed
