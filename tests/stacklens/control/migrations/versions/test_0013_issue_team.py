"""Revision 0013: teams, assignees and their history, comments, ownership rules, notification settings,
watchers, digest items, regression marks, and personal e-mail channels."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "teams": {"org_id", "slug", "name", "index:ix_teams_org_id"},
    "team_members": {"team_id", "user_id", "index:ix_team_members_user_id"},
    "issue_assignees": {
        "project_id",
        "issue_id",
        "user_id",
        "team_id",
        "rule",
        "index:ix_issue_assignees_org_id",
    },
    "issue_actions": {"issue_id", "actor", "action", "detail", "index:ix_issue_actions_issue"},
    "issue_comments": {"issue_id", "author", "body", "edited_at", "index:ix_issue_comments_issue"},
    "ownership_rules": {"project_id", "rules", "checked_until"},
    "notification_settings": {"user_id", "project_id", "kind", "mode", "last_sent_at"},
    "issue_watchers": {"issue_id", "user_id"},
    "notification_digest_items": {"user_id", "subject", "sent_at", "index:ix_digest_items_pending"},
    "issue_news_marks": {"project_id", "regressions_until"},
    "alert_channels": {"personal_user_id"},
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0013", "0011", ADDED)
