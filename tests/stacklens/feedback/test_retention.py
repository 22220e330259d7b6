"""Retention: each project's feedback and attachments older than its days (or the installation's) go, files
and rows; younger ones stay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.control.db import session_scope
from stacklens.feedback.attachment_files import AttachmentIn, attachments_of_event, store_attachments
from stacklens.feedback.items import FeedbackIn
from stacklens.feedback.records import FeedbackFilter, feedback_rows, record_feedback
from stacklens.feedback.retention import remove_expired


def test_expired_feedback_and_files_go(org: dict[str, Any]) -> None:
    settings, org_id, project_id = org["settings"], org["org_id"], org["project_id"]
    now = datetime.now(UTC)
    old, young = now - timedelta(days=10), now - timedelta(days=2)
    with session_scope(settings) as session:
        for n, when in ((1, old), (2, young)):
            item = FeedbackIn(f"{n:032x}", "dialog", "", "", "", "", f"note {n}")
            record_feedback(session, org_id, project_id, [item], when)
            data = AttachmentIn(f"{n}.log", "text/plain", "event.attachment", b"x")
            store_attachments(settings, session, org_id, project_id, f"{n:032x}", [data], when)
    with session_scope(settings) as session:
        removed = remove_expired(settings, session, {project_id: 7}, now)
        assert removed.as_json() == {"attachments_deleted": 1, "feedback_deleted": 1}
        assert [r.message for r in feedback_rows(session, org_id, project_id, FeedbackFilter())] == ["note 2"]
        assert attachments_of_event(session, org_id, project_id, f"{1:032x}") == []
        assert len(attachments_of_event(session, org_id, project_id, f"{2:032x}")) == 1
        # Without days of its own, the installation's (90 by default) keep both.
        assert remove_expired(settings, session, {}, now).as_json() == {
            "attachments_deleted": 0,
            "feedback_deleted": 0,
        }
