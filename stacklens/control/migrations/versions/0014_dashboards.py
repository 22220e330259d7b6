"""The analyst's workspace: dashboards, their share links, annotations and report subscriptions
(docs/explore.md).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dashboards",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "owner_user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("filters", sa.JSON(), nullable=False),
        sa.Column("widgets", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_dashboards_org_id", "dashboards", ["org_id"])
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
        ),
        sa.Column("time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("text", sa.String(500), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("release", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_annotations_org_id", "annotations", ["org_id"])
    op.create_index("ix_annotations_project_id", "annotations", ["project_id"])
    op.create_index("ix_annotations_time", "annotations", ["time"])
    op.create_table(
        "report_subscriptions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "owner_user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column(
            "dashboard_id", sa.Integer(), sa.ForeignKey("dashboards.id", ondelete="CASCADE"), nullable=True
        ),
        sa.Column(
            "saved_query_id",
            sa.Integer(),
            sa.ForeignKey("saved_queries.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column("every", sa.String(8), nullable=False),
        sa.Column("at", sa.String(5), nullable=False),
        sa.Column("weekday", sa.Integer(), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("format", sa.String(8), nullable=False),
        sa.Column(
            "channel_id", sa.Integer(), sa.ForeignKey("alert_channels.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_report_subscriptions_org_id", "report_subscriptions", ["org_id"])
    op.create_index("ix_report_subscriptions_next_run_at", "report_subscriptions", ["next_run_at"])
    op.create_table(
        "dashboard_shares",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "dashboard_id", sa.Integer(), sa.ForeignKey("dashboards.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "created_by_user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("snapshot", sa.JSON(), nullable=True),
        sa.Column("snapshot_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_dashboard_shares_org_id", "dashboard_shares", ["org_id"])
    op.create_index("ix_dashboard_shares_dashboard_id", "dashboard_shares", ["dashboard_id"])


def downgrade() -> None:
    op.drop_table("dashboard_shares")
    op.drop_table("report_subscriptions")
    op.drop_table("annotations")
    op.drop_table("dashboards")
