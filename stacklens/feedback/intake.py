"""What an envelope's feedback and attachments become (docs/feedback.md): planned before its lines are
admitted (which attachments fit the project's quota), kept once they are (files, rows, the new-feedback
notice), and counted in outcomes as their envelope is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from stacklens.control.db import session_scope
from stacklens.control.project_quotas import project_quotas
from stacklens.feedback.attachment_files import AttachmentIn, fitting, store_attachments
from stacklens.feedback.items import FeedbackIn, hex_id, with_rules
from stacklens.feedback.notices import notify_new_feedback
from stacklens.feedback.records import record_feedback
from stacklens.ingest.clock import kept_under
from stacklens.outcomes.counting import ATTACHMENT_QUOTA, Outcomes
from stacklens.scrubbing.store import project_rules
from stacklens.settings import Settings


@dataclass
class Extras:
    """An envelope's feedback and the attachments that fit its project's quota; ``over_quota``: how many
    did not."""

    org_id: int
    project_id: int
    event_id: str
    feedback: list[FeedbackIn] = field(default_factory=list)
    attachments: list[AttachmentIn] = field(default_factory=list)
    over_quota: int = 0
    sent_at: float | None = (
        None  # the envelope's send time: the attachments are kept under it (as their event)
    )

    def __bool__(self) -> bool:
        return bool(self.feedback or self.attachments or self.over_quota)

    def accepted(self) -> Outcomes:
        """What is kept when the envelope is: counted as its lines are (accepted, or refused with them)."""
        counts: Outcomes = Counter()
        if self.attachments:
            counts[(self.project_id, "attachment", "accepted", "")] += len(self.attachments)
        if self.feedback:
            counts[(self.project_id, "feedback", "accepted", "")] += len(self.feedback)
        return counts

    def refused(self) -> Outcomes:
        """What is refused whatever happens to the envelope: attachments past the project's quota."""
        counts: Outcomes = Counter()
        if self.over_quota:
            counts[(self.project_id, "attachment", "rate_limited", ATTACHMENT_QUOTA)] += self.over_quota
        return counts


def plan_extras(
    settings: Settings,
    org_id: int,
    project_id: int,
    event_id: str,
    feedback: Sequence[FeedbackIn],
    attachments: Sequence[AttachmentIn],
    sent_at: float | None = None,
) -> Extras:
    """The envelope's feedback, and its attachments within the project's byte quota (its own, set with
    ``PUT /api/projects/{slug}/quota``, else the installation's ``STACKLENS_ATTACHMENT_QUOTA_BYTES``)."""
    extras = Extras(org_id, project_id, hex_id(event_id), list(feedback), sent_at=sent_at)
    if attachments:
        with session_scope(settings) as session:
            own = project_quotas(session, [project_id]).get(project_id)
            quota = own.attachment_quota(settings) if own else settings.attachment_quota_bytes
            kept, over = fitting(session, project_id, attachments, quota)
        extras.attachments, extras.over_quota = kept, over
    return extras


def keep_extras(settings: Settings, extras: Extras, received: datetime) -> None:
    """Write the attachments and feedback of an envelope whose lines were admitted, and tell the members who
    chose to hear of new feedback."""
    if not (extras.feedback or extras.attachments):
        return
    with session_scope(settings) as session:
        if extras.attachments and extras.event_id:
            store_attachments(
                settings,
                session,
                extras.org_id,
                extras.project_id,
                extras.event_id,
                extras.attachments,
                kept_under(extras.sent_at, received, settings.retention_days),
            )
        rules = project_rules(session, extras.project_id)  # the project's scrubbing rules (docs/scrubbing.md)
        feedback = [with_rules(item, rules) for item in extras.feedback]
        new = record_feedback(
            session, extras.org_id, extras.project_id, feedback, received, settings.retention_days
        )
        if new:
            notify_new_feedback(settings, session, extras.org_id, extras.project_id, new)
