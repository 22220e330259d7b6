"""Control-store tables of the issue-tracker integrations: connections and the links of issues to tickets.

Imported by :mod:`stacklens.control.models` so they share its metadata (one Alembic history).

A link row is the idempotency record of "create linked issue": it is unique per (project, issue,
connection, target) and is written in state ``creating`` — with a random ``marker`` that goes into the
ticket's description — *before* the tracker is called. A second request finds the row instead of calling the
tracker again; a crash between the tracker's answer and the update leaves a ``creating`` row whose marker
lets the next attempt find the ticket that was made rather than make another (see
:mod:`stacklens.integrations.links`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class TrackerConnection(Base):
    """A token-based connection of an organization to GitHub, GitLab, Jira or Linear."""

    __tablename__ = "tracker_connections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(16))  # github | gitlab | jira | linear
    name: Mapped[str] = mapped_column(String(200))
    base_url: Mapped[str] = mapped_column(String(500), default="")
    email: Mapped[str] = mapped_column(String(320), default="")  # Jira Cloud basic auth
    token_encrypted: Mapped[str] = mapped_column(Text)  # Fernet under the server secret; never shown again
    token_hint: Mapped[str] = mapped_column(String(16), default="")  # "…abcd", to tell tokens apart
    default_target: Mapped[str] = mapped_column(String(300), default="")
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # {"issue_type": "Bug"} (Jira)
    resolve_on_close: Mapped[bool] = mapped_column(Boolean, default=False)
    account_name: Mapped[str] = mapped_column(String(200), default="")  # "connected as …" at the last test
    targets: Mapped[list[Any]] = mapped_column(
        JSON, default=list
    )  # repositories/projects/teams the token reaches
    tested_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class ExternalLink(Base):
    """A StackLens issue linked to a ticket (created from StackLens, or an existing one linked by hand)."""

    __tablename__ = "external_links"
    __table_args__ = (
        UniqueConstraint("project_id", "issue_id", "connection_id", "target", name="uq_external_link_target"),
        Index("ix_external_links_issue", "project_id", "issue_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    issue_id: Mapped[int] = mapped_column(BigInteger)  # the warehouse's 52-bit issue id
    connection_id: Mapped[int] = mapped_column(
        ForeignKey("tracker_connections.id", ondelete="CASCADE"), index=True
    )
    target: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(12), default="creating")  # creating | linked
    marker: Mapped[str] = mapped_column(String(40))  # written into the ticket's description
    ticket_key: Mapped[str] = mapped_column(String(300), default="")
    ticket_url: Mapped[str] = mapped_column(String(1000), default="")
    ticket_state: Mapped[str] = mapped_column(String(12), default="")  # open | closed
    origin: Mapped[str] = mapped_column(String(8), default="created")  # created | linked
    last_error: Mapped[str] = mapped_column(String(500), default="")  # the last failed state read
    checked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # Failed state reads in a row, and when the next read is due (None: with the others, oldest first).
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    retry_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)  # creating since
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(320), default="")
