"""Password rules (NIST SP 800-63B): the reproductions of the review are refused with a clear reason."""

from __future__ import annotations

import pytest

from stacklens.control.errors import AccountError
from stacklens.control.passwords import check_password, common_passwords, password_problem


@pytest.mark.parametrize(
    ("password", "reason"),
    [
        ("password", "most common"),
        ("12345678", "sequence"),
        ("        ", "repeats too few"),
        ("aaaaaaaa", "repeats too few"),
        ("abcdefgh", "sequence"),
        ("87654321", "sequence"),
        ("Qwerty123", "most common"),
        ("owner@example.test", "e-mail"),
        ("OWNER@example.test", "e-mail"),
        ("ownername", "name part"),
        ("short", "at least 8"),
        ("x" * 300, "at most 256"),
    ],
)
def test_weak_passwords_are_refused_with_the_reason(password: str, reason: str) -> None:
    email = "ownername@example.test" if reason == "name part" else "owner@example.test"
    with pytest.raises(AccountError, match=reason):
        check_password(password, email)


def test_good_passwords_pass_and_length_counts_characters_not_bytes() -> None:
    for password in ("correct horse battery", "password-123", "long-enough-1", "ÅÄÖåäöÆØ", "tr0ub4dor&3"):
        assert password_problem(password, "someone@example.test") is None
    assert "password" in common_passwords() and len(common_passwords()) > 150
    assert password_problem(123, "a@b.c") == "the password must be text"


def test_accounts_apply_the_rules(control_settings) -> None:
    from stacklens.control import accounts
    from stacklens.control.db import migrate_control_store, session_scope

    migrate_control_store(control_settings)
    with pytest.raises(AccountError, match="most common"), session_scope(control_settings) as session:
        accounts.create_organization(session, "Weak", "weak@example.test", "password")
    with pytest.raises(AccountError, match="e-mail"), session_scope(control_settings) as session:
        accounts.create_organization(session, "Weak", "weak@example.test", "weak@example.test")
