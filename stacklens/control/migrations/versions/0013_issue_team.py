"""A team's work on issues: teams and members, issue assignees and their history, comments, ownership rules,
and what people are told (notification settings, watchers, daily digest items, personal e-mail channels).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_ISSUE_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("slug", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("org_id", "slug"),
    )
    op.create_index("ix_teams_org_id", "teams", ["org_id"])
    op.create_table(
        "team_members",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.UniqueConstraint("team_id", "user_id"),
    )
    op.create_index("ix_team_members_team_id", "team_members", ["team_id"])
    op.create_index("ix_team_members_user_id", "team_members", ["user_id"])
    op.create_table(
        "issue_assignees",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issue_id", _ISSUE_ID, nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=True),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=True),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("assigned_by", sa.String(320), nullable=False),
        sa.Column("rule", sa.String(500), nullable=False),
        sa.UniqueConstraint("project_id", "issue_id"),
    )
    op.create_index("ix_issue_assignees_org_id", "issue_assignees", ["org_id"])
    op.create_table(
        "issue_actions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issue_id", _ISSUE_ID, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(320), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
    )
    op.create_index("ix_issue_actions_org_id", "issue_actions", ["org_id"])
    op.create_index("ix_issue_actions_issue", "issue_actions", ["project_id", "issue_id", "at"])
    op.create_table(
        "issue_comments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issue_id", _ISSUE_ID, nullable=False),
        sa.Column(
            "author_user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("author", sa.String(320), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("edited_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_issue_comments_org_id", "issue_comments", ["org_id"])
    op.create_index("ix_issue_comments_issue", "issue_comments", ["project_id", "issue_id", "created_at"])
    op.create_table(
        "ownership_rules",
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(320), nullable=False),
        sa.Column("checked_until", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_ownership_rules_org_id", "ownership_rules", ["org_id"])
    op.create_table(
        "notification_settings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("last_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("user_id", "project_id", "kind"),
    )
    op.create_index("ix_notification_settings_org_id", "notification_settings", ["org_id"])
    op.create_index("ix_notification_settings_user_id", "notification_settings", ["user_id"])
    op.create_table(
        "issue_watchers",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issue_id", _ISSUE_ID, nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.UniqueConstraint("project_id", "issue_id", "user_id"),
    )
    op.create_index("ix_issue_watchers_org_id", "issue_watchers", ["org_id"])
    op.create_index("ix_issue_watchers_user_id", "issue_watchers", ["user_id"])
    op.create_table(
        "notification_digest_items",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("issue_id", _ISSUE_ID, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(500), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("link", sa.String(2000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_notification_digest_items_org_id", "notification_digest_items", ["org_id"])
    op.create_index("ix_digest_items_pending", "notification_digest_items", ["user_id", "sent_at"])
    op.create_table(
        "issue_news_marks",
        sa.Column(
            "project_id", sa.Integer(), sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column(
            "org_id", sa.Integer(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("regressions_until", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_issue_news_marks_org_id", "issue_news_marks", ["org_id"])
    with op.batch_alter_table("alert_channels") as batch:
        batch.add_column(
            sa.Column(
                "personal_user_id",
                sa.Integer(),
                sa.ForeignKey("users.id", name="fk_alert_channels_personal_user_id", ondelete="CASCADE"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("alert_channels") as batch:
        batch.drop_column("personal_user_id")
    op.drop_table("issue_news_marks")
    op.drop_table("notification_digest_items")
    op.drop_table("issue_watchers")
    op.drop_table("notification_settings")
    op.drop_table("ownership_rules")
    op.drop_table("issue_comments")
    op.drop_table("issue_actions")
    op.drop_table("issue_assignees")
    op.drop_table("team_members")
    op.drop_table("teams")
