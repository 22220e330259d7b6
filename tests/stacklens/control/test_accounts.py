from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.auth import verify_api_key
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError
from stacklens.control.models import ActivityEntry, ApiKey, User
from stacklens.control.projects import create_project
from stacklens.settings import Settings


def _actions(session, org_id: int) -> list[str]:
    return list(
        session.scalars(
            select(ActivityEntry.action).where(ActivityEntry.org_id == org_id).order_by(ActivityEntry.id)
        )
    )


def test_create_organization_makes_owner_key_and_log(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, api_key = accounts.create_organization(session, "Acme Inc", "Owner@Example.com", "correct-horse")
    with session_scope(control_settings) as session:
        user = session.scalar(select(User).where(User.email == "owner@example.com"))
        assert user is not None and user.password_hash.startswith("$argon2id$")
        assert accounts.user_memberships(session, user.id)[0][0].id == org.id
        assert accounts.user_memberships(session, user.id)[0][1] == "owner"
        key = session.scalar(select(ApiKey).where(ApiKey.org_id == org.id))
        assert key.key_hash != api_key and api_key not in key.key_encrypted and key.last4 == api_key[-4:]
        assert _actions(session, org.id) == ["organization.created", "api_key.created"]
        assert org.slug == "acme-inc"


@pytest.mark.parametrize(
    ("name", "email", "password", "message"),
    [
        ("", "a@b.co", "password-1", "organization name"),
        ("Org", "not-an-email", "password-1", "invalid e-mail"),
        ("Org", "a@b.co", "short", "at least 8"),
    ],
)
def test_create_organization_refuses_bad_input(
    control_settings: Settings, name: str, email: str, password: str, message: str
) -> None:
    with pytest.raises(AccountError, match=message), session_scope(control_settings) as session:
        accounts.create_organization(session, name, email, password)


def test_duplicate_organization_name_is_refused(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        accounts.create_organization(session, "Acme", "a@b.co", "password-1")
    with (
        pytest.raises(AccountError, match="already exists"),
        session_scope(control_settings) as session,
    ):
        accounts.create_organization(session, "acme", "c@d.co", "password-1")


def test_authenticate_user(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        accounts.add_member(session, org.id, "m@b.co", "member-pass", role="member")
    with session_scope(control_settings) as session:
        assert accounts.authenticate_user(session, "A@B.co ", "password-1") is not None
        assert accounts.authenticate_user(session, "a@b.co", "wrong-pass") is None
        assert accounts.authenticate_user(session, "nobody@b.co", "password-1") is None
        member = accounts.authenticate_user(session, "m@b.co", "member-pass")
        assert accounts.user_memberships(session, member.id)[0][1] == "member"
    with pytest.raises(AccountError, match="role"), session_scope(control_settings) as session:
        accounts.add_member(session, org.id, "x@b.co", "password-1", role="superuser")


def test_passwords_are_hashed_with_argon2id_at_the_products_cost(control_settings: Settings) -> None:
    """The suite hashes at argon2id's lowest cost (tests/conftest.py); the product hashes at the library's
    recommended one, and a stored hash of lower cost is raised to it at the next sign-in."""
    from argon2 import PasswordHasher
    from argon2.profiles import RFC_9106_LOW_MEMORY

    product = PasswordHasher()
    assert (product.time_cost, product.memory_cost, product.parallelism) == (
        RFC_9106_LOW_MEMORY.time_cost,
        RFC_9106_LOW_MEMORY.memory_cost,
        RFC_9106_LOW_MEMORY.parallelism,
    )
    cheap = accounts._hasher
    with session_scope(control_settings) as session:
        accounts.create_organization(session, "Acme", "a@b.co", "password-1")
    accounts._hasher = product
    try:
        with session_scope(control_settings) as session:
            stored = session.scalar(select(User.password_hash).where(User.email == "a@b.co"))
            assert stored.startswith("$argon2id$") and product.check_needs_rehash(stored)
            assert accounts.authenticate_user(session, "a@b.co", "password-1") is not None
        with session_scope(control_settings) as session:
            stored = session.scalar(select(User.password_hash).where(User.email == "a@b.co"))
            assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
            assert not product.check_needs_rehash(stored)
    finally:
        accounts._hasher = cheap


def test_verify_api_key_refuses_whitespace_app_keys_and_garbage(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, api_key = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        _, app_key = create_project(session, org.id, "Web")
    with session_scope(control_settings) as session:
        for raw in (api_key + " ", " " + api_key, api_key + "\n", app_key, "", "stacklens_api_" + "x" * 32):
            assert verify_api_key(session, raw) is None, raw


def test_set_quota(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        accounts.set_quota(session, org.id, events_per_minute=120, requests_per_second=3)
    with session_scope(control_settings) as session:
        identity_org = accounts.organization_by_name(session, "ACME")
        assert (identity_org.events_per_minute, identity_org.requests_per_second) == (120, 3)
        assert _actions(session, org.id)[-1] == "quota.changed"
    with (
        pytest.raises(AccountError, match="events-per-minute"),
        session_scope(control_settings) as session,
    ):
        accounts.set_quota(session, org.id, events_per_minute=0)
