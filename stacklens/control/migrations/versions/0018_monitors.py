"""Monitors: cron monitors and uptime checks, their check-ins and incidents (issue #64).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _fk(table: str) -> sa.ForeignKey:
    return sa.ForeignKey(f"{table}.id", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "monitors",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("org_id", sa.Integer(), _fk("organizations"), nullable=False),
        sa.Column("project_id", sa.Integer(), _fk("projects"), nullable=False),
        sa.Column("slug", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("schedule_type", sa.String(8), nullable=False),
        sa.Column("schedule_value", sa.String(100), nullable=False),
        sa.Column("schedule_unit", sa.String(8), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("checkin_margin", sa.Integer(), nullable=False),
        sa.Column("max_runtime", sa.Integer(), nullable=False),
        sa.Column("failure_issue_threshold", sa.Integer(), nullable=False),
        sa.Column("recovery_threshold", sa.Integer(), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("method", sa.String(8), nullable=False),
        sa.Column("interval_seconds", sa.Integer(), nullable=False),
        sa.Column("timeout_ms", sa.Integer(), nullable=False),
        sa.Column("expected_status", sa.Integer(), nullable=False),
        sa.Column("failure_threshold", sa.Integer(), nullable=False),
        sa.Column("next_expected_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_check_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_checkin_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_checkin_status", sa.String(12), nullable=False),
        sa.Column("failures_in_row", sa.Integer(), nullable=False),
        sa.Column("successes_in_row", sa.Integer(), nullable=False),
        sa.Column("open_incident_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("project_id", "slug"),
    )
    op.create_index("ix_monitors_org_id", "monitors", ["org_id"])
    op.create_index("ix_monitors_project_id", "monitors", ["project_id"])
    op.create_index("ix_monitors_next_expected", "monitors", ["next_expected_at"])
    op.create_index("ix_monitors_next_check", "monitors", ["next_check_at"])
    op.create_table(
        "monitor_checkins",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("monitor_id", sa.Integer(), _fk("monitors"), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expected_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("timeout_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("processed", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_monitor_checkins_org_id", "monitor_checkins", ["org_id"])
    op.create_index("ix_monitor_checkins_monitor_time", "monitor_checkins", ["monitor_id", "received_at"])
    op.create_index("ix_monitor_checkins_timeout", "monitor_checkins", ["status", "timeout_at"])
    op.create_index("ix_monitor_checkins_unprocessed", "monitor_checkins", ["processed", "monitor_id"])
    op.create_table(
        "monitor_incidents",
        sa.Column("id", _BIG_ID, primary_key=True),
        sa.Column("monitor_id", sa.Integer(), _fk("monitors"), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("issue_event_sent", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_monitor_incidents_org_id", "monitor_incidents", ["org_id"])
    op.create_index("ix_monitor_incidents_monitor", "monitor_incidents", ["monitor_id", "opened_at"])


def downgrade() -> None:
    op.drop_table("monitor_incidents")
    op.drop_table("monitor_checkins")
    op.drop_table("monitors")
