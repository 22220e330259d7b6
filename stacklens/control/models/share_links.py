"""Control-store table of share links: signed, expiring, revocable read-only links to an issue or an event."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class ShareLink(Base):
    """A signed, expiring, revocable read-only link to an issue, an event or an issue over a time range."""

    __tablename__ = "share_links"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    issue_id: Mapped[str] = mapped_column(String(64))
    event_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    range_start: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    range_end: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
