"""Control-store tables of what users and SDKs send beside events: user feedback and event attachments
(docs/feedback.md).

Feedback is written by people, a few rows a day, and read by people: it lives here, beside comments, rather
than in the warehouse. An attachment's row says what the file is; its bytes are a file in the data directory
(stacklens.feedback.attachment_files), so a minidump or a log file is kept as the SDK sent it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class UserFeedback(Base):
    """One piece of user feedback: ``source`` ``feedback`` (the SDKs' widget), ``user_report`` (the older
    item) or ``dialog`` (the crash-report dialog). ``event_id`` is the error it speaks of ('' when none)."""

    __tablename__ = "user_feedback"
    __table_args__ = (
        UniqueConstraint("project_id", "feedback_id"),
        Index("ix_user_feedback_project_received", "project_id", "received_at"),
        Index("ix_user_feedback_event", "project_id", "event_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    feedback_id: Mapped[str] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(16))
    event_id: Mapped[str] = mapped_column(String(32))
    replay_id: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(200))
    message: Mapped[str] = mapped_column(Text)
    url: Mapped[str] = mapped_column(String(2000))
    release: Mapped[str] = mapped_column(String(200))
    environment: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class EventAttachment(Base):
    """One file sent with an event (``attachment_type``: ``event.attachment``, ``event.minidump``,
    ``event.view_hierarchy``, …); the bytes are at ``<data_dir>/attachments/<org>/<project>/<id>``."""

    __tablename__ = "event_attachments"
    __table_args__ = (
        UniqueConstraint("project_id", "event_id", "sha256", "filename"),
        Index("ix_event_attachments_event", "project_id", "event_id"),
        Index("ix_event_attachments_received", "project_id", "received_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(32))
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(200))
    attachment_type: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
