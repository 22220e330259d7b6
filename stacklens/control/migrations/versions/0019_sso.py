"""Company sign-in (OpenID Connect): an organization's provider, its people's identities, sign-ins under way
and break-glass accounts (issue #65).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sso_configs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issuer", sa.String(500), nullable=False),
        sa.Column("client_id", sa.String(300), nullable=False),
        sa.Column("client_secret_encrypted", sa.Text(), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("groups_claim", sa.String(100), nullable=False),
        sa.Column("role_map", sa.JSON(), nullable=False),
        sa.Column("default_role", sa.String(16), nullable=False),
        sa.Column("enforce", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("session_max_age_minutes", sa.Integer(), nullable=False),
        sa.Column("allowed_domains", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("org_id"),
    )
    op.create_table(
        "sso_identities",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issuer", sa.String(500), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_sign_in_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("org_id", "issuer", "subject"),
    )
    op.create_index("ix_sso_identities_org_id", "sso_identities", ["org_id"])
    op.create_index("ix_sso_identities_user_id", "sso_identities", ["user_id"])
    op.create_table(
        "sso_logins",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("state_hash", sa.String(64), nullable=False),
        sa.Column("nonce", sa.String(100), nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=False),
        sa.Column("next_path", sa.String(500), nullable=False),
        sa.Column("trial", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("state_hash"),
    )
    op.create_index("ix_sso_logins_org_id", "sso_logins", ["org_id"])
    op.create_table(
        "sso_break_glass",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("org_id", "user_id"),
    )
    op.create_index("ix_sso_break_glass_org_id", "sso_break_glass", ["org_id"])
    op.create_index("ix_sso_break_glass_user_id", "sso_break_glass", ["user_id"])


def downgrade() -> None:
    op.drop_table("sso_break_glass")
    op.drop_table("sso_logins")
    op.drop_table("sso_identities")
    op.drop_table("sso_configs")
