"""Control-store tables of a team's work on issues: teams and their members, who an issue is assigned to (and
why), the assignment history, comments, each project's ownership rules, and what people are told (settings per
project and kind, watchers, daily digest items).

Issues themselves live in the warehouse (``issue_list``); these rows refer to them by ``(project_id,
issue_id)`` and always carry ``org_id`` so that every read is scoped to one organization.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow

# Issue ids are 52-bit integers (stacklens.ingest grouping); SQLite's INTEGER is 64-bit already.
_ISSUE_ID = BigInteger().with_variant(Integer, "sqlite")


class Team(Base):
    __tablename__ = "teams"
    __table_args__ = (UniqueConstraint("org_id", "slug"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    slug: Mapped[str] = mapped_column(String(64))  # what `#slug` names in assignments and ownership rules
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class TeamMember(Base):
    __tablename__ = "team_members"
    __table_args__ = (UniqueConstraint("team_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)


class IssueAssignee(Base):
    """Who an issue is assigned to now: one member or one team (an unassigned issue has no row)."""

    __tablename__ = "issue_assignees"
    __table_args__ = (UniqueConstraint("project_id", "issue_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    issue_id: Mapped[int] = mapped_column(_ISSUE_ID)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=True)
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), nullable=True)
    assigned_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    assigned_by: Mapped[str] = mapped_column(String(320), default="")  # e-mail, `api:<key id>` or `system`
    # The ownership rule that assigned it ("path:src/checkout/* #payments"); "" when a person did.
    rule: Mapped[str] = mapped_column(String(500), default="")


class IssueAction(Base):
    """One line of an issue's own history that is not a status change (those are in the warehouse's
    ``issue_history``): ``assigned`` / ``unassigned`` with ``detail`` {"assignee", "rule"}."""

    __tablename__ = "issue_actions"
    __table_args__ = (Index("ix_issue_actions_issue", "project_id", "issue_id", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    issue_id: Mapped[int] = mapped_column(_ISSUE_ID)
    at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    actor: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(32))
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class IssueComment(Base):
    """A comment on an issue: markdown as its author wrote it (rendered, escaped, when shown)."""

    __tablename__ = "issue_comments"
    __table_args__ = (Index("ix_issue_comments_issue", "project_id", "issue_id", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    issue_id: Mapped[int] = mapped_column(_ISSUE_ID)
    # A removed account's comments stay, without an author.
    author_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # Who wrote it as the history shows it: the author's e-mail, or `api:<key id>` for a comment made with an
    # API key; only the same author may edit or delete it.
    author: Mapped[str] = mapped_column(String(320))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    edited_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class OwnershipRules(Base):
    """A project's ownership rules in Sentry's syntax, as written (parsed when used)."""

    __tablename__ = "ownership_rules"

    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    rules: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_by: Mapped[str] = mapped_column(String(320), default="")
    # New issues first seen from here on are assigned by the rules (stacklens.issues.auto_assign moves it on);
    # issues older than the rules are left to people.
    checked_until: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class NotificationSetting(Base):
    """How a person hears of one kind of issue news in one project: ``none``, ``immediate`` or ``daily``
    (a digest). No row: the kind's default (stacklens.issues.notifications.DEFAULTS)."""

    __tablename__ = "notification_settings"
    __table_args__ = (UniqueConstraint("user_id", "project_id", "kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    mode: Mapped[str] = mapped_column(String(16))
    # The weekly summary: when it was last put in the outbox (each week once).
    last_sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True, default=None)


class IssueWatcher(Base):
    """A person who asked to hear of an issue's comments and regressions without being its assignee."""

    __tablename__ = "issue_watchers"
    __table_args__ = (UniqueConstraint("project_id", "issue_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    issue_id: Mapped[int] = mapped_column(_ISSUE_ID)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)


class DigestItem(Base):
    """One piece of issue news waiting for a person's daily digest (sent once: ``sent_at``)."""

    __tablename__ = "notification_digest_items"
    __table_args__ = (Index("ix_digest_items_pending", "user_id", "sent_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    issue_id: Mapped[int] = mapped_column(_ISSUE_ID)
    kind: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(String(500))
    text: Mapped[str] = mapped_column(Text)
    link: Mapped[str] = mapped_column(String(2000))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class IssueNewsMark(Base):
    """Up to when a project's regressions have been told to the people of each issue (stacklens.issues.
    notifications.notify_regressions); made when the project first has an assignee or a watcher."""

    __tablename__ = "issue_news_marks"

    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    regressions_until: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
