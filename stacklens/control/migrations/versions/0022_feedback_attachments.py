"""User feedback (the SDKs' feedback widget, user reports, the crash-report dialog) and the attachments sent
with events, whose bytes are files in the data directory (issue #68, docs/feedback.md).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def _fk(table: str) -> sa.ForeignKey:
    return sa.ForeignKey(f"{table}.id", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "user_feedback",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("org_id", sa.Integer(), _fk("organizations"), nullable=False),
        sa.Column("project_id", sa.Integer(), _fk("projects"), nullable=False),
        # The feedback's own id (its event id, or a user report's event id): sent again, kept once.
        sa.Column("feedback_id", sa.String(32), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("event_id", sa.String(32), nullable=False),
        sa.Column("replay_id", sa.String(32), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(200), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("release", sa.String(200), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("project_id", "feedback_id"),
    )
    op.create_index("ix_user_feedback_org_id", "user_feedback", ["org_id"])
    op.create_index("ix_user_feedback_project_received", "user_feedback", ["project_id", "received_at"])
    op.create_index("ix_user_feedback_event", "user_feedback", ["project_id", "event_id"])
    op.create_table(
        "event_attachments",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("org_id", sa.Integer(), _fk("organizations"), nullable=False),
        sa.Column("project_id", sa.Integer(), _fk("projects"), nullable=False),
        sa.Column("event_id", sa.String(32), nullable=False),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("content_type", sa.String(200), nullable=False),
        sa.Column("attachment_type", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("project_id", "event_id", "sha256", "filename"),
    )
    op.create_index("ix_event_attachments_org_id", "event_attachments", ["org_id"])
    op.create_index("ix_event_attachments_event", "event_attachments", ["project_id", "event_id"])
    op.create_index("ix_event_attachments_received", "event_attachments", ["project_id", "received_at"])


def downgrade() -> None:
    op.drop_table("event_attachments")
    op.drop_table("user_feedback")
