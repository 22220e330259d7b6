"""Merged issues: a recorded grouping override per (project, fingerprint) (issue #49 point 3).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_ISSUE_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "issue_merges",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("fingerprint", sa.String(128), nullable=False),
        sa.Column("source_issue_id", _ISSUE_ID, nullable=False),
        sa.Column("target_issue_id", _ISSUE_ID, nullable=False),
        sa.Column("exception_type", sa.String(512), nullable=False),
        sa.Column("merged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("merged_by", sa.String(320), nullable=False),
        sa.UniqueConstraint("project_id", "fingerprint"),
    )
    op.create_index("ix_issue_merges_org_id", "issue_merges", ["org_id"])
    op.create_index("ix_issue_merges_project_id", "issue_merges", ["project_id"])
    op.create_index("ix_issue_merges_source_issue_id", "issue_merges", ["source_issue_id"])
    op.create_index("ix_issue_merges_target_issue_id", "issue_merges", ["target_issue_id"])


def downgrade() -> None:
    op.drop_table("issue_merges")
