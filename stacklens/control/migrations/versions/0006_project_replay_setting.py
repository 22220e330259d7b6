"""Session replay: a project setting that turns replay ingest off (issue #20).

Revision ID: 0006
Revises: 0003
Create Date: 2026-11-23 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"  # after the tracker connections (issue #21)
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("replay_enabled", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("replay_enabled")
