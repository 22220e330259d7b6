"""The new-feedback notice: only members who chose it hear of it, at once (the outbox) or in their digest;
nothing without an SMTP server."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import AlertNotification, DigestItem
from stacklens.feedback.items import FeedbackIn
from stacklens.feedback.notices import notify_new_feedback
from stacklens.feedback.records import record_feedback
from stacklens.issues.notifications import set_settings


def test_members_who_chose_it_are_told(org: dict[str, Any]) -> None:
    settings, org_id, project_id = org["settings"], org["org_id"], org["project_id"]
    mail = settings.model_copy(update={"smtp_url": "smtp://127.0.0.1:9"})
    item = FeedbackIn("f" * 32, "feedback", "", "", "Ada", "ada@x.test", "The <b>cart</b> is empty")
    with session_scope(settings) as session:
        bob = accounts.add_member(session, org_id, "bob@acme.test", "a-long-password-1")
        carol = accounts.add_member(session, org_id, "carol@acme.test", "a-long-password-1")
        accounts.add_member(session, org_id, "dan@acme.test", "a-long-password-1")  # the default: none
        set_settings(session, org_id, bob.id, {org["project"]: {"feedback": "immediate"}})
        set_settings(session, org_id, carol.id, {org["project"]: {"feedback": "daily"}})
        rows = record_feedback(session, org_id, project_id, [item])
        assert notify_new_feedback(settings, session, org_id, project_id, rows) == 0  # no SMTP server
        assert notify_new_feedback(mail, session, org_id, project_id, rows) == 2
        sent = session.scalars(select(AlertNotification).where(AlertNotification.org_id == org_id)).all()
        assert [n.kind for n in sent] == ["feedback"]
        assert "&lt;b&gt;cart&lt;/b&gt;" in sent[0].payload["html"] and "/feedback" in sent[0].payload["link"]
        digest = session.scalars(select(DigestItem).where(DigestItem.user_id == carol.id)).all()
        assert [d.kind for d in digest] == ["feedback"]
