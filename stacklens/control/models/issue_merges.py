"""Control-store table of grouping overrides: which fingerprints a person merged into another issue.

Grouping versions stay frozen (an event's fingerprint and its derived issue id never change); a merge is a
recorded override on top of them. A row maps one ``(project_id, fingerprint)`` to the issue that now holds
its events. Ingest reads a project's rows with its DSN key and stamps new (and re-ingested) events with the
target; a split deletes rows, so those fingerprints fall back to their own derived issue.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow

# Issue ids are 52-bit integers (stacklens.ingest grouping); SQLite's INTEGER is 64-bit already.
_ISSUE_ID = BigInteger().with_variant(Integer, "sqlite")


class IssueMerge(Base):
    """One fingerprint of a project grouped into ``target_issue_id`` instead of its own issue."""

    __tablename__ = "issue_merges"
    __table_args__ = (UniqueConstraint("project_id", "fingerprint"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    fingerprint: Mapped[str] = mapped_column(String(128))
    # The fingerprint's own issue (its derived id): the id that redirects to the target while the row is
    # there.
    source_issue_id: Mapped[int] = mapped_column(_ISSUE_ID, index=True)
    target_issue_id: Mapped[int] = mapped_column(_ISSUE_ID, index=True)
    exception_type: Mapped[str] = mapped_column(String(512), default="")  # for "split by exception type"
    merged_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    merged_by: Mapped[str] = mapped_column(String(320), default="")
