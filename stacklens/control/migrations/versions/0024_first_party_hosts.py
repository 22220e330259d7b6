"""A project's own script hosts (issue #69, docs/performance.md "INP causes"): host names whose scripts count
as
first party in the INP view beside the page's own host; empty by default (the page's host alone).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("first_party_hosts", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("first_party_hosts")
