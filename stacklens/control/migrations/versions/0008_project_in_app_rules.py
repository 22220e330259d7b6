"""A project's in-app rules: module prefixes whose stack frames are the application's own (``in_app_include``)
or a vendor's (``in_app_exclude``), for the culprit and the in-app frames of its events.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("in_app_include", sa.JSON(), nullable=False, server_default="[]"))
        batch.add_column(sa.Column("in_app_exclude", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("in_app_exclude")
        batch.drop_column("in_app_include")
