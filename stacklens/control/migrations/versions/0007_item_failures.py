"""Per-item failures of the periodic loops: a tracker link's failed state reads, an alert rule's and a
budget's failed evaluations — why, how many times in a row, and when the item is tried again.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _retry_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("failures", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("retry_at", sa.DateTime(timezone=True), nullable=True),
    ]


def upgrade() -> None:
    with op.batch_alter_table("external_links") as batch:
        for column in _retry_columns():
            batch.add_column(column)
    for table in ("alert_rules", "budgets"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("last_error", sa.String(length=500), nullable=False, server_default="")
            )
            for column in _retry_columns():
                batch.add_column(column)


def downgrade() -> None:
    for table in ("budgets", "alert_rules"):
        with op.batch_alter_table(table) as batch:
            for name in ("retry_at", "failures", "last_error"):
                batch.drop_column(name)
    with op.batch_alter_table("external_links") as batch:
        batch.drop_column("retry_at")
        batch.drop_column("failures")
