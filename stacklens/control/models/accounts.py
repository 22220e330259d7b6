"""Control-store tables of accounts: organizations (with their quotas), people, memberships, projects, keys,
key usage, the activity log, sign-in sessions and invitations.

Everything that must be consistent the moment it is written lives in the control store (a regenerated key is
refused by the very next request); events and marts live in the warehouse.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import (
    false as sa_false,
)
from sqlalchemy import (
    true as sa_true,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # Quotas; the rate limiter reads them (token buckets per organization and per key).
    events_per_minute: Mapped[int] = mapped_column(Integer, default=60_000)
    requests_per_second: Mapped[int] = mapped_column(Integer, default=50)
    # Who may publish public links (issue pages, dashboards): "owners" or "members"
    # (stacklens.control.share_publishers). Owners only unless an owner opens it to every member: a link is
    # readable by anyone who has it, for up to a year.
    share_links_by: Mapped[str] = mapped_column(String(16), default="owners", server_default="owners")

    projects: Mapped[list[Project]] = relationship(back_populates="organization")


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)  # stored lower-cased
    name: Mapped[str] = mapped_column(String(200), default="")
    password_hash: Mapped[str] = mapped_column(String(200))  # argon2id
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    # An operator of the installation (instance-wide, not one organization's): sees /admin/operations.
    # Granted with `stacklens admin grant-operator EMAIL`, never from the web.
    is_operator: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())


class Membership(Base):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("org_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # "owner" | "admin" | "member" | "viewer" (control.roles)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(
        String(64), unique=True
    )  # global, so CLI `--project SLUG` is unambiguous
    platform: Mapped[str] = mapped_column(String(32), default="python")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # Session replay ingest (issue #20): on by default, as recording is the SDK's own opt-in.
    replay_enabled: Mapped[bool] = mapped_column(Boolean, default=True, server_default=sa_true())
    # Module prefixes whose frames are the application's own / a vendor's, whatever the SDK marked
    # (stacklens.ingest.in_app): the culprit and the in-app frames of the events received from then on.
    in_app_include: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    in_app_exclude: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    # The project's own quotas inside the organization's (stacklens.control.project_quotas): events per
    # minute over every category (None: only the organization's), and per-category limits (with, under
    # "attachment_bytes", the bytes of attachments the project keeps; absent: the installation's quota).
    events_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    category_quotas: Mapped[dict[str, int]] = mapped_column(JSON, default=dict, server_default="{}")
    # Days of raw data kept for this project (stacklens/operations/retention.py); None: the installation's
    # STACKLENS_RETENTION_DAYS, which also caps it (the engine's TTL drops anything older).
    retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    # Event caps (stacklens/operations/event_caps.py): at most this many error events kept per issue / in the
    # project, the oldest removed by the retention run; None: no cap. The counters keep counting every event.
    max_events_per_issue: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    max_events_per_project: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    # Data scrubbing rules applied at ingest after the built-in scrubbing (stacklens.scrubbing,
    # docs/scrubbing.md):
    # {"rules": [...], "salt": "<hex>"}, the salt keying the `hash` method; {} for none.
    scrubbing: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    # Host names whose scripts are the project's own in the INP view beside the page's host
    # (docs/performance.md,
    # "INP causes"); hosts, lower case, no scheme or port.
    first_party_hosts: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")

    organization: Mapped[Organization] = relationship(back_populates="projects")
    app_keys: Mapped[list[AppKey]] = relationship(back_populates="project")


class ApiKey(Base):
    """Account-level key. One current (``revoked_at IS NULL``) per organization."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)  # SHA-256 hex of the full value
    key_encrypted: Mapped[str] = mapped_column(Text)  # Fernet token under the server secret, for viewing
    last4: Mapped[str] = mapped_column(String(4))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    created_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # The "next" key of a zero-downtime rotation: it authenticates beside the current one until
    # regeneration promotes it (then the previous current key is revoked). At most one per organization.
    is_next: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


class AppKey(Base):
    """Project-level key: the primary one (``service`` NULL) and any number of per-service ones."""

    __tablename__ = "app_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    service: Mapped[str | None] = mapped_column(String(31), nullable=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    key_encrypted: Mapped[str] = mapped_column(Text)
    last4: Mapped[str] = mapped_column(String(4))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)

    project: Mapped[Project] = relationship(back_populates="app_keys")


class ActivityEntry(Base):
    """One activity-log line: key created / regenerated / viewed / revoked, member and setting changes."""

    __tablename__ = "activity_log"
    __table_args__ = (Index("ix_activity_org_time", "org_id", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    actor_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(64))  # e.g. "api_key.regenerated", "app_key.created"
    target_kind: Mapped[str] = mapped_column(String(32), default="")  # "api_key" | "app_key" | ...
    target_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class KeyUsage(Base):
    """Key use aggregated per key per hour, so usage logging costs one upsert, not one row per request."""

    __tablename__ = "key_usage"
    __table_args__ = (UniqueConstraint("key_kind", "key_id", "hour"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    key_kind: Mapped[str] = mapped_column(String(8))  # "api" | "app"
    key_id: Mapped[int] = mapped_column(Integer)
    hour: Mapped[datetime] = mapped_column(UtcDateTime())
    requests: Mapped[int] = mapped_column(Integer, default=0)
    events: Mapped[int] = mapped_column(Integer, default=0)
    last_ip: Mapped[str] = mapped_column(String(64), default="")
    last_user_agent: Mapped[str] = mapped_column(String(300), default="")
    last_used_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class UserSession(Base):
    """A signed-in browser. The cookie carries a random token; only its SHA-256 is stored, so a database
    leak opens no session. Revoked at sign-out, password change and removal from an organization."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())  # the absolute lifetime's end
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    ip: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(300), default="")


class Invitation(Base):
    """An invitation to join an organization: a link holding a random token (hash stored), expiring,
    revocable, accepted once."""

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320))  # stored lower-cased
    role: Mapped[str] = mapped_column(String(16), default="member")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    accepted_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    accepted_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
