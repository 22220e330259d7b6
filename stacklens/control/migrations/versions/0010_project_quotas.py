"""A project's own quotas inside its organization's: events per minute (all categories) and per-category
limits (``{"error": 600, "transaction": 300}``), both unset by default (the organization's quota alone).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("events_per_minute", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("category_quotas", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("category_quotas")
        batch.drop_column("events_per_minute")
