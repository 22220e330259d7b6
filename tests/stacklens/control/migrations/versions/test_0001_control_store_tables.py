"""Revision 0001: the control store's first tables: organizations, people, projects, keys, activity,
budgets, share links."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "organizations": {"id"},
    "users": {"id"},
    "memberships": {"org_id", "user_id", "index:ix_memberships_org_id", "index:ix_memberships_user_id"},
    "projects": {"org_id", "index:ix_projects_org_id"},
    "api_keys": {"org_id", "index:ix_api_keys_org_id"},
    "app_keys": {"project_id", "index:ix_app_keys_project_id"},
    "key_usage": {"index:ix_key_usage_org_id"},
    "activity_log": {"org_id", "created_at", "index:ix_activity_org_time"},
    "budgets": {"project_id", "index:ix_budgets_project_id"},
    "share_links": {"index:ix_share_links_org_id"},
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0001", "base", ADDED)
