"""An envelope's feedback and attachments: the attachments that fit the project's quota planned, the rest
counted as refused; kept once the envelope is admitted; their outcomes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from stacklens.control.db import session_scope
from stacklens.feedback.attachment_files import AttachmentIn, attachments_of_event
from stacklens.feedback.intake import keep_extras, plan_extras
from stacklens.feedback.items import FeedbackIn
from stacklens.feedback.records import FeedbackFilter, feedback_rows

EVENT = "e" * 32


def test_plan_keep_and_count(org: dict[str, Any]) -> None:
    settings = org["settings"].model_copy(update={"attachment_quota_bytes": 10})
    org_id, project_id = org["org_id"], org["project_id"]
    files = [AttachmentIn("a.txt", "text/plain", "event.attachment", b"x" * 6)] * 2
    note = FeedbackIn("f" * 32, "feedback", EVENT, "", "Ada", "a@x.test", "Broken")
    extras = plan_extras(settings, org_id, project_id, EVENT, [note], files)
    assert (len(extras.attachments), extras.over_quota) == (1, 1)
    assert extras.accepted() == {
        (project_id, "attachment", "accepted", ""): 1,
        (project_id, "feedback", "accepted", ""): 1,
    }
    assert extras.refused() == {(project_id, "attachment", "rate_limited", "attachment_quota"): 1}
    keep_extras(settings, extras, datetime.now(UTC))
    with session_scope(settings) as session:
        assert [a.filename for a in attachments_of_event(session, org_id, project_id, EVENT)] == ["a.txt"]
        assert [r.message for r in feedback_rows(session, org_id, project_id, FeedbackFilter())] == ["Broken"]
    assert not plan_extras(settings, org_id, project_id, EVENT, [], [])  # nothing to keep


def test_the_projects_own_attachment_quota_applies(org: dict[str, Any]) -> None:
    """A project's own quota (PUT /api/projects/{slug}/quota) wins over the installation's, either way."""
    from stacklens.control.project_quotas import set_project_quota

    org_id, project_id = org["org_id"], org["project_id"]
    files = [AttachmentIn("a.txt", "text/plain", "event.attachment", b"x" * 6)] * 3
    roomy = org["settings"].model_copy(update={"attachment_quota_bytes": 1_000})
    with session_scope(roomy) as session:
        set_project_quota(session, org_id, project_id, None, attachment_bytes=13)
    extras = plan_extras(roomy, org_id, project_id, EVENT, [], files)
    assert (len(extras.attachments), extras.over_quota) == (2, 1)
    assert extras.refused() == {(project_id, "attachment", "rate_limited", "attachment_quota"): 1}
    tight = org["settings"].model_copy(update={"attachment_quota_bytes": 0})
    with session_scope(tight) as session:
        set_project_quota(session, org_id, project_id, None, attachment_bytes=100)
    assert (len(plan_extras(tight, org_id, project_id, EVENT, [], files).attachments)) == 3
    with session_scope(tight) as session:
        set_project_quota(session, org_id, project_id, None, attachment_bytes=None)
    assert plan_extras(tight, org_id, project_id, EVENT, [], files).over_quota == 3
