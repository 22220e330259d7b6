"""The new-feedback notice: members who chose ``feedback`` for a project (``/account/notifications``,
``PUT /api/me/notifications``) hear of each new feedback by e-mail, at once or in their daily digest,
through the alert outbox like every notice (stacklens.issues.notifications). Default: none."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.alerts import outbox
from stacklens.control.models import (
    DigestItem,
    Membership,
    NotificationSetting,
    Organization,
    Project,
    User,
    utcnow,
)
from stacklens.feedback.records import FeedbackRow
from stacklens.issues.notifications import personal_channel
from stacklens.public_url import public_base_url
from stacklens.settings import Settings

KIND = "feedback"


def _listeners(session: Session, org_id: int, project_id: int) -> list[tuple[User, str]]:
    """Members who chose to hear of the project's feedback, with their mode (only a stored choice: the
    default is none)."""
    return [
        (user, str(mode))
        for user, mode in session.execute(
            select(User, NotificationSetting.mode)
            .join(Membership, Membership.user_id == User.id)
            .join(NotificationSetting, NotificationSetting.user_id == User.id)
            .where(
                Membership.org_id == org_id,
                NotificationSetting.org_id == org_id,
                NotificationSetting.project_id == project_id,
                NotificationSetting.kind == KIND,
                NotificationSetting.mode != "none",
            )
        )
    ]


def notify_new_feedback(
    settings: Settings, session: Session, org_id: int, project_id: int, rows: Sequence[FeedbackRow]
) -> int:
    """Queue the notices of ``rows`` (new feedback of one project); how many people were told. Nothing is
    queued without an SMTP server (``STACKLENS_SMTP_URL``), as for every personal notice."""
    if not rows or not settings.smtp_url:
        return 0
    people = _listeners(session, org_id, project_id)
    org, project = session.get(Organization, org_id), session.get(Project, project_id)
    if not people or org is None or project is None:
        return 0
    link = f"{public_base_url(settings)}/orgs/{org.slug}/projects/{project.slug}/feedback"
    for row in rows:
        who = row.name or row.email or "someone"
        subject = f"[StackLens] New feedback on {project.slug} from {who}"[:500]
        text = f"{who} wrote:\n\n{row.message}\n\nProject: {project.slug}"
        for user, mode in people:
            if mode == "daily":
                session.add(
                    DigestItem(
                        org_id=org_id,
                        user_id=user.id,
                        project_id=project_id,
                        issue_id=0,
                        kind=KIND,
                        subject=subject,
                        text=text,
                        link=link,
                        created_at=utcnow(),
                    )
                )
                continue
            html = "".join(f"<p>{escape(line)}</p>" for line in text.split("\n") if line)
            html += f'<p><a href="{escape(link, quote=True)}">Open the feedback in StackLens</a></p>'
            payload = {
                "subject": subject,
                "text": f"{text}\n\nOpen: {link}\n",
                "html": html,
                "link": link,
                "data": {"kind": KIND, "project": project.slug, "feedback_id": row.id},
            }
            channel = personal_channel(session, org_id, user)
            outbox.enqueue(session, org_id, [channel.id], KIND, payload)
    session.flush()
    return len(people)
