"""Revision 0020: the sessions single sign-on opened (maximum age, refresh at the provider)."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "sso_sessions": {
        "id",
        "user_session_id",
        "org_id",
        "refresh_token_encrypted",
        "created_at",
        "next_refresh_at",
        "index:ix_sso_sessions_org_id",
    }
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0020", "0019", ADDED)
