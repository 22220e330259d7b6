"""Dashboard variables and auto-refresh (issue #70 points 3 and 5, docs/explore.md "Variables"): a
dashboard's variables over a column's values or a fixed list (``[{"name", "column" | "values",
"default"}]``, empty by default) and how often its page asks again (``null``, ``30s``, ``1m``, ``5m``,
``15m``).

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-28 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dashboards") as batch:
        batch.add_column(sa.Column("variables", sa.JSON(), nullable=False, server_default="[]"))
        batch.add_column(sa.Column("refresh", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("dashboards") as batch:
        batch.drop_column("refresh")
        batch.drop_column("variables")
