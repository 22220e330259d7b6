"""An envelope's feedback and attachments: the attachments that fit the project's quota planned, the rest
counted as refused; kept once the envelope is admitted; their outcomes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.control.db import session_scope
from stacklens.feedback.attachment_files import AttachmentIn, attachments_of_event
from stacklens.feedback.intake import keep_extras, plan_extras
from stacklens.feedback.items import FeedbackIn
from stacklens.feedback.records import FeedbackFilter, feedback_rows
from stacklens.feedback.retention import remove_expired

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


def test_attachments_are_kept_under_their_envelopes_send_time_and_leave_with_their_event(
    org: dict[str, Any],
) -> None:
    """An attachment sent with an event ten days old (the envelope's ``sent_at``, as an SDK sends after an
    outage or a backfill does) is kept under that time, so a 7-day retention removes it with its event; a
    send time no event could be stored under (past the retention, ahead of the clock) keeps the arrival."""
    settings, org_id, project_id = org["settings"], org["org_id"], org["project_id"]
    now = datetime.now(UTC)
    sent = {
        "1" * 32: now - timedelta(days=10),
        "2" * 32: now - timedelta(days=400),
        "3" * 32: now + timedelta(hours=1),
    }
    for event_id, at in sent.items():
        files = [AttachmentIn(f"{event_id[0]}.log", "text/plain", "event.attachment", b"x")]
        keep_extras(
            settings, plan_extras(settings, org_id, project_id, event_id, [], files, at.timestamp()), now
        )
    with session_scope(settings) as session:
        kept = {e: attachments_of_event(session, org_id, project_id, e)[0].received_at for e in sent}
        assert abs((kept["1" * 32] - sent["1" * 32]).total_seconds()) < 1
        assert kept["2" * 32] == kept["3" * 32] == now
        assert remove_expired(settings, session, {project_id: 7}, now).attachments == 1
        assert attachments_of_event(session, org_id, project_id, "1" * 32) == []
        assert all(attachments_of_event(session, org_id, project_id, e) for e in ("2" * 32, "3" * 32))
