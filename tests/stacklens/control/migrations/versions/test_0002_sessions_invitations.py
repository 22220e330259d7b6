"""Revision 0002: dashboard sessions and invitations, and the API key's successor flag."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "user_sessions": {"id", "user_id", "index:ix_user_sessions_user_id"},
    "invitations": {"org_id", "index:ix_invitations_org_id"},
    "api_keys": {"is_next"},
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0002", "0001", ADDED)
