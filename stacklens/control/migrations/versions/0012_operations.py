"""Operations (docs/operations.md): the operators' maintenance log, a project's own retention, the operator
flag.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "maintenance_runs",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("summary", sa.String(500), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
    )
    op.create_index("ix_maintenance_runs_kind", "maintenance_runs", ["kind"])
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("retention_days", sa.Integer(), nullable=True))
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("is_operator", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("is_operator")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("retention_days")
    op.drop_index("ix_maintenance_runs_kind", "maintenance_runs")
    op.drop_table("maintenance_runs")
