"""Alerting: rules, rule states, evaluations, channels, the notification outbox and the delivery log.

It follows the sessions and invitations revision (0002).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 23:41:41.066486
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"  # after the sessions and invitations (issue #14)
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert_channels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secret_encrypted", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("paused_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pause_reason", sa.String(length=300), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_channels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_channels_org_id"), ["org_id"], unique=False)

    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("notification_id", sa.String(length=40), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(length=12), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("response_excerpt", sa.String(length=500), nullable=False),
        sa.Column("error", sa.String(length=500), nullable=False),
        sa.Column("next_retry_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["channel_id"], ["alert_channels.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_alert_deliveries_channel_time", ["channel_id", "started_at"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_alert_deliveries_notification_id"), ["notification_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_alert_deliveries_org_id"), ["org_id"], unique=False)

    op.create_table(
        "alert_notifications",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("digest_id", sa.String(length=40), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["alert_channels.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_notifications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_notifications_channel_id"), ["channel_id"], unique=False)
        batch_op.create_index("ix_alert_notifications_due", ["status", "next_attempt_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_alert_notifications_org_id"), ["org_id"], unique=False)

    op.create_table(
        "alert_rules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("metric", sa.String(length=32), nullable=False),
        sa.Column("statistic", sa.String(length=8), nullable=False),
        sa.Column("scope", sa.String(length=300), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("warning_threshold", sa.Float(), nullable=True),
        sa.Column("resolve_threshold", sa.Float(), nullable=True),
        sa.Column("window_seconds", sa.Integer(), nullable=False),
        sa.Column("min_samples", sa.Integer(), nullable=False),
        sa.Column("count_kind", sa.String(length=8), nullable=False),
        sa.Column("environment", sa.String(length=64), nullable=False),
        sa.Column("filters", sa.JSON(), nullable=False),
        sa.Column("renotify_minutes", sa.Integer(), nullable=False),
        sa.Column("channel_ids", sa.JSON(), nullable=False),
        sa.Column("budget_id", sa.Integer(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_rules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_rules_org_id"), ["org_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_alert_rules_project_id"), ["project_id"], unique=False)

    op.create_table(
        "alert_evaluations",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("scope_key", sa.String(length=300), nullable=False),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("window_end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("state_before", sa.String(length=20), nullable=False),
        sa.Column("state_after", sa.String(length=20), nullable=False),
        sa.Column("decision", sa.String(length=200), nullable=False),
        sa.Column("notified", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["rule_id"], ["alert_rules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_evaluations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_evaluations_org_id"), ["org_id"], unique=False)
        batch_op.create_index("ix_alert_evaluations_rule_time", ["rule_id", "evaluated_at"], unique=False)

    op.create_table(
        "alert_rule_states",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("scope_key", sa.String(length=300), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("release", sa.String(length=200), nullable=False),
        sa.Column("last_notified_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["rule_id"], ["alert_rules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("rule_id", "scope_key"),
    )
    with op.batch_alter_table("alert_rule_states", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_rule_states_rule_id"), ["rule_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alert_rule_states", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_rule_states_rule_id"))

    op.drop_table("alert_rule_states")
    with op.batch_alter_table("alert_evaluations", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_evaluations_rule_time")
        batch_op.drop_index(batch_op.f("ix_alert_evaluations_org_id"))

    op.drop_table("alert_evaluations")
    with op.batch_alter_table("alert_rules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_rules_project_id"))
        batch_op.drop_index(batch_op.f("ix_alert_rules_org_id"))

    op.drop_table("alert_rules")
    with op.batch_alter_table("alert_notifications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_notifications_org_id"))
        batch_op.drop_index("ix_alert_notifications_due")
        batch_op.drop_index(batch_op.f("ix_alert_notifications_channel_id"))

    op.drop_table("alert_notifications")
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_deliveries_org_id"))
        batch_op.drop_index(batch_op.f("ix_alert_deliveries_notification_id"))
        batch_op.drop_index("ix_alert_deliveries_channel_time")

    op.drop_table("alert_deliveries")
    with op.batch_alter_table("alert_channels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_channels_org_id"))

    op.drop_table("alert_channels")
