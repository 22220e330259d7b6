"""A project's data scrubbing rules (issue #66, docs/scrubbing.md): ``{"rules": [...], "salt": "..."}``,
applied at ingest after the built-in scrubbing; empty by default (the built-in scrubbing alone, as before).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("scrubbing", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("scrubbing")
