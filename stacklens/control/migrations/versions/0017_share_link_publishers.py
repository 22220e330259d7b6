"""Who may publish public share links: an organization's setting, owners only by default (issue #62).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("organizations") as batch:
        batch.add_column(sa.Column("share_links_by", sa.String(16), nullable=False, server_default="owners"))


def downgrade() -> None:
    with op.batch_alter_table("organizations") as batch:
        batch.drop_column("share_links_by")
