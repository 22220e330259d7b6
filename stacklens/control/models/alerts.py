"""Control-store tables of alerting: rules, their per-scope states and evaluations, channels, the outbox.

Imported by :mod:`stacklens.control.models` so they share its metadata (one Alembic history). The outbox
(`alert_notifications`) is what makes delivery durable: a notification is a row with a stable id before any
byte leaves the process, and a sender claims it with a lease, so a crash mid-send leaves a row another drain
sends again under the same id (the receiver deduplicates by it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow

_BIG_ID = BigInteger().with_variant(Integer, "sqlite")


class AlertChannel(Base):
    """Where notifications go: an e-mail list, a Slack incoming webhook or a signed generic webhook."""

    __tablename__ = "alert_channels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(16))  # "email" | "slack" | "webhook"
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # {"url": …} or {"to": [...]}
    secret_encrypted: Mapped[str | None] = mapped_column(Text, nullable=True)  # webhook whsec_… (Fernet)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # Health: a run of permanent failures pauses the channel (notifications wait, none is dropped).
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    last_success_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_failure_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    paused_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    pause_reason: Mapped[str] = mapped_column(String(300), default="")
    # A person's own e-mail channel (stacklens.issues.notifications): what they are told about issues goes
    # through the outbox like any notification, but the channel is theirs, not the organization's, so channel
    # lists, alert rules and the service's own alerts leave it out.
    personal_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True, default=None
    )


class AlertRule(Base):
    """One alert rule of a project; the type decides which of the measurement fields apply."""

    __tablename__ = "alert_rules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(32))
    metric: Mapped[str] = mapped_column(String(32), default="")
    statistic: Mapped[str] = mapped_column(String(8), default="")
    scope: Mapped[str] = mapped_column(String(300), default="*")  # "*" or a route pattern ("/products/*")
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    warning_threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    resolve_threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    window_seconds: Mapped[int] = mapped_column(Integer, default=3600)
    min_samples: Mapped[int] = mapped_column(Integer, default=1)
    count_kind: Mapped[str] = mapped_column(String(8), default="events")  # event_frequency: events | users
    environment: Mapped[str] = mapped_column(String(64), default="")
    filters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # {"release", "level", "tag": "k:v"}
    renotify_minutes: Mapped[int] = mapped_column(Integer, default=0)  # 0: notify on transitions only
    channel_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    budget_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # An evaluation that raised: why (shown on the rule's page), how many times in a row, and when the rule
    # is evaluated again (the outbox's backoff); the other rules are evaluated as usual meanwhile.
    last_error: Mapped[str] = mapped_column(String(500), default="", server_default="")
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    retry_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class AlertRuleState(Base):
    """The state of one rule for one scope (``*``, a page pattern, or an issue id)."""

    __tablename__ = "alert_rule_states"
    __table_args__ = (UniqueConstraint("rule_id", "scope_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("alert_rules.id", ondelete="CASCADE"), index=True)
    scope_key: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(20), default="insufficient_data")
    since: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    release: Mapped[str] = mapped_column(String(200), default="")  # the release the firing started in
    last_notified_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class AlertEvaluation(Base):
    """Why a rule fired or not: one row per rule, scope and evaluation."""

    __tablename__ = "alert_evaluations"
    __table_args__ = (Index("ix_alert_evaluations_rule_time", "rule_id", "evaluated_at"),)

    id: Mapped[int] = mapped_column(_BIG_ID, primary_key=True)
    org_id: Mapped[int] = mapped_column(Integer, index=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("alert_rules.id", ondelete="CASCADE"))
    scope_key: Mapped[str] = mapped_column(String(300), default="*")
    evaluated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    window_start: Mapped[datetime] = mapped_column(UtcDateTime())
    window_end: Mapped[datetime] = mapped_column(UtcDateTime())
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    samples: Mapped[int] = mapped_column(Integer, default=0)
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    state_before: Mapped[str] = mapped_column(String(20))
    state_after: Mapped[str] = mapped_column(String(20))
    decision: Mapped[str] = mapped_column(String(200))  # plain words: "firing: 2,310 > 2,000 ms"
    notified: Mapped[bool] = mapped_column(Boolean, default=False)


class AlertNotification(Base):
    """The outbox: one message for one channel, with a stable id the receiver can deduplicate by."""

    __tablename__ = "alert_notifications"
    __table_args__ = (Index("ix_alert_notifications_due", "status", "next_attempt_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # "msg_<26 base32>": webhook-id
    org_id: Mapped[int] = mapped_column(Integer, index=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("alert_channels.id", ondelete="CASCADE"), index=True)
    rule_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    kind: Mapped[str] = mapped_column(String(16))  # "firing" | "resolved" | "renotify" | "test" | "digest"
    payload: Mapped[dict[str, Any]] = mapped_column(
        JSON, default=dict
    )  # the message: subject, text, html, data
    # pending → sending (leased) → delivered | failed | digested (folded into a digest notification)
    status: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    digest_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    last_error: Mapped[str] = mapped_column(String(500), default="")


class AlertDelivery(Base):
    """The delivery log: one row per attempt to send a notification."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (Index("ix_alert_deliveries_channel_time", "channel_id", "started_at"),)

    id: Mapped[int] = mapped_column(_BIG_ID, primary_key=True)
    org_id: Mapped[int] = mapped_column(Integer, index=True)
    notification_id: Mapped[str] = mapped_column(String(40), index=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("alert_channels.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    outcome: Mapped[str] = mapped_column(String(12))  # "delivered" | "retry" | "permanent" | "expired"
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    response_excerpt: Mapped[str] = mapped_column(String(500), default="")
    error: Mapped[str] = mapped_column(String(500), default="")
    next_retry_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
