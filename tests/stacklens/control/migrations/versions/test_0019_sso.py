"""Revision 0019: company sign-in's tables (provider, identities, sign-ins under way, break-glass)."""

from __future__ import annotations

from pathlib import Path

from tests.stacklens.control.migrations.revisions import check_revision

ADDED = {
    "sso_configs": {
        "id",
        "org_id",
        "issuer",
        "client_id",
        "client_secret_encrypted",
        "scopes",
        "groups_claim",
        "role_map",
        "default_role",
        "enforce",
        "session_max_age_minutes",
        "allowed_domains",
        "updated_at",
    },
    "sso_identities": {"id", "org_id", "issuer", "subject", "user_id", "created_at", "last_sign_in_at"},
    "sso_logins": {
        "id",
        "org_id",
        "state_hash",
        "nonce",
        "code_verifier",
        "next_path",
        "trial",
        "created_at",
        "used_at",
    },
    "sso_break_glass": {"id", "org_id", "user_id", "created_at"},
}


def test_upgrade_adds_them_and_downgrade_takes_them_back(tmp_path: Path) -> None:
    check_revision(tmp_path, "0019", "0018", ADDED)
