"""Sessions opened by single sign-on: the organization's maximum age and refreshes at the provider end them
(issue #65).

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sso_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "user_session_id",
            sa.Integer(),
            sa.ForeignKey("user_sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("refresh_token_encrypted", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_refresh_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("user_session_id"),
    )
    op.create_index("ix_sso_sessions_org_id", "sso_sessions", ["org_id"])


def downgrade() -> None:
    op.drop_table("sso_sessions")
