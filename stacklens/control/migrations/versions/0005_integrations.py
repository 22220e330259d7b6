"""Issue-tracker integrations: connections (encrypted tokens) and the links of issues to tickets.

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-23 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"  # after the budget fields (issue #16)
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tracker_connections",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("token_encrypted", sa.Text(), nullable=False),
        sa.Column("token_hint", sa.String(length=16), nullable=False),
        sa.Column("default_target", sa.String(length=300), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("resolve_on_close", sa.Boolean(), nullable=False),
        sa.Column("account_name", sa.String(length=200), nullable=False),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("tested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("tracker_connections", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tracker_connections_org_id"), ["org_id"], unique=False)

    op.create_table(
        "external_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("org_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("issue_id", sa.BigInteger(), nullable=False),
        sa.Column("connection_id", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(length=300), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("marker", sa.String(length=40), nullable=False),
        sa.Column("ticket_key", sa.String(length=300), nullable=False),
        sa.Column("ticket_url", sa.String(length=1000), nullable=False),
        sa.Column("ticket_state", sa.String(length=12), nullable=False),
        sa.Column("origin", sa.String(length=8), nullable=False),
        sa.Column("last_error", sa.String(length=500), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=320), nullable=False),
        sa.ForeignKeyConstraint(["connection_id"], ["tracker_connections.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["org_id"], ["organizations.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "project_id", "issue_id", "connection_id", "target", name="uq_external_link_target"
        ),
    )
    with op.batch_alter_table("external_links", schema=None) as batch_op:
        batch_op.create_index("ix_external_links_issue", ["project_id", "issue_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_external_links_org_id"), ["org_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_external_links_connection_id"), ["connection_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("external_links", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_external_links_connection_id"))
        batch_op.drop_index(batch_op.f("ix_external_links_org_id"))
        batch_op.drop_index("ix_external_links_issue")
    op.drop_table("external_links")
    with op.batch_alter_table("tracker_connections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tracker_connections_org_id"))
    op.drop_table("tracker_connections")
