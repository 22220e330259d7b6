"""Budgets gain a statistic, a window and a minimum sample count (issue #16).

Existing budgets keep what they meant: p75 over 7 days (p95 for API p95, per page view for the byte budgets),
and 20 samples before a verdict.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 02:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"  # after the alerting tables
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("budgets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("statistic", sa.String(length=8), nullable=False, server_default="p75"))
        batch_op.add_column(sa.Column("window_days", sa.Integer(), nullable=False, server_default="7"))
        batch_op.add_column(sa.Column("min_samples", sa.Integer(), nullable=False, server_default="20"))
    # The fixed-statistic metrics say so in their row.
    op.execute("UPDATE budgets SET statistic = 'p95' WHERE metric = 'api_p95_ms'")
    op.execute("UPDATE budgets SET statistic = 'avg' WHERE metric = 'js_bytes'")


def downgrade() -> None:
    with op.batch_alter_table("budgets", schema=None) as batch_op:
        batch_op.drop_column("min_samples")
        batch_op.drop_column("window_days")
        batch_op.drop_column("statistic")
