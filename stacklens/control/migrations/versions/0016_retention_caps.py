"""Event caps: at most N error events kept per issue and per project (docs/operations.md, "Event caps").

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("max_events_per_issue", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("max_events_per_project", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("max_events_per_project")
        batch.drop_column("max_events_per_issue")
