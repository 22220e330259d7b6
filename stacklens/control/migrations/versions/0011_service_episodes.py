"""The service's own alert episodes (stacklens/self_watch): one row per condition, firing or not.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_episodes",
        sa.Column("condition", sa.String(40), primary_key=True),
        sa.Column("firing", sa.Boolean(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("service_episodes")
