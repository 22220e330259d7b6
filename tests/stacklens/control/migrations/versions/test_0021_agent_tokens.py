"""Revision 0021: agent tokens (personal and OAuth), registered OAuth clients and authorization codes."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "agent_tokens": {
        "id",
        "org_id",
        "user_id",
        "name",
        "kind",
        "client_id",
        "scopes",
        "token_hash",
        "refresh_hash",
        "prefix",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
        "index:ix_agent_tokens_org_user",
    },
    "oauth_clients": {"id", "client_id", "name", "info_encrypted", "created_at"},
    "oauth_codes": {
        "id",
        "code_hash",
        "client_id",
        "org_id",
        "user_id",
        "scopes",
        "code_challenge",
        "redirect_uri",
        "redirect_uri_explicit",
        "resource",
        "expires_at",
        "used_at",
    },
}


def test_upgrade_adds_it_and_downgrade_takes_it_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0021", "0020", ADDED)
