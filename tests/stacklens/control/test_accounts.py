from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.auth import resolve_app_key, verify_api_key
from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry, ApiKey, AppKey, User
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
    with pytest.raises(accounts.AccountError, match=message), session_scope(control_settings) as session:
        accounts.create_organization(session, name, email, password)


def test_duplicate_organization_name_is_refused(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        accounts.create_organization(session, "Acme", "a@b.co", "password-1")
    with (
        pytest.raises(accounts.AccountError, match="already exists"),
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
    with pytest.raises(accounts.AccountError, match="role"), session_scope(control_settings) as session:
        accounts.add_member(session, org.id, "x@b.co", "password-1", role="admin")


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


def test_project_slugs_are_unique_across_organizations(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        one, _ = accounts.create_organization(session, "One", "a@b.co", "password-1")
        two, _ = accounts.create_organization(session, "Two", "c@d.co", "password-1")
        first, _ = accounts.create_project(session, one.id, "Web App")
        second, _ = accounts.create_project(session, two.id, "Web App")
        third, _ = accounts.create_project(session, two.id, "web app!")
    assert (first.slug, second.slug, third.slug) == ("web-app", "web-app-2", "web-app-3")
    with session_scope(control_settings) as session:
        assert accounts.project_by_slug(session, "web-app-2").id == second.id
        with pytest.raises(accounts.AccountError):
            accounts.project_by_slug(session, "web-app-2", org_id=one.id)
    with pytest.raises(accounts.AccountError, match="platform"), session_scope(control_settings) as session:
        accounts.create_project(session, one.id, "X", platform="cobol")


def test_api_key_regeneration_refuses_the_old_value(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, old = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
    with session_scope(control_settings) as session:
        identity = verify_api_key(session, old)
        assert identity is not None and identity.org_name == "Acme" and identity.created_at.tzinfo is not None
    with session_scope(control_settings) as session:
        new = accounts.regenerate_api_key(session, org.id)
    with session_scope(control_settings) as session:
        assert verify_api_key(session, old) is None
        assert verify_api_key(session, new).org_id == org.id
        assert accounts.reveal_api_key(session, org.id, None) == new
        assert _actions(session, org.id)[-2:] == ["api_key.regenerated", "api_key.viewed"]
        assert (
            session.scalar(select(ApiKey).where(ApiKey.org_id == org.id, ApiKey.revoked_at.is_(None))).last4
            == new[-4:]
        )


def test_verify_api_key_refuses_whitespace_app_keys_and_garbage(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, api_key = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        _, app_key = accounts.create_project(session, org.id, "Web")
    with session_scope(control_settings) as session:
        for raw in (api_key + " ", " " + api_key, api_key + "\n", app_key, "", "stacklens_api_" + "x" * 32):
            assert verify_api_key(session, raw) is None, raw


def test_app_key_lifecycle(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        other, _ = accounts.create_organization(session, "Other", "o@b.co", "password-1")
        project, primary = accounts.create_project(session, org.id, "Web")
        worker = accounts.create_app_key(session, project.id, "worker")
    assert worker.startswith("stacklens_app_worker_")
    with session_scope(control_settings) as session:
        found = resolve_app_key(session, org.id, worker)
        assert (found.project_id, found.service) == (project.id, "worker")
        assert resolve_app_key(session, org.id, primary).service is None
        assert resolve_app_key(session, other.id, primary) is None  # another organization's key
        assert [k.service for k in accounts.list_app_keys(session, project.id)] == [None, "worker"]
        assert all(
            primary not in k.masked and worker not in k.masked
            for k in accounts.list_app_keys(session, project.id)
        )
    with (
        pytest.raises(accounts.AccountError, match="already has"),
        session_scope(control_settings) as session,
    ):
        accounts.create_app_key(session, project.id, "worker")
    with (
        pytest.raises(accounts.AccountError, match="invalid service"),
        session_scope(control_settings) as session,
    ):
        accounts.create_app_key(session, project.id, "Bad_Name")
    with session_scope(control_settings) as session:
        new_worker = accounts.regenerate_app_key(session, project.id, "worker")
        new_primary = accounts.regenerate_app_key(session, project.id)
    with session_scope(control_settings) as session:
        assert resolve_app_key(session, org.id, worker) is None
        assert resolve_app_key(session, org.id, primary) is None
        assert resolve_app_key(session, org.id, new_worker).service == "worker"
        assert accounts.reveal_app_key(session, project.id, None) == new_primary
        worker_row = session.scalar(
            select(AppKey).where(AppKey.service == "worker", AppKey.revoked_at.is_(None))
        )
        accounts.revoke_app_key(session, worker_row.id)
    with session_scope(control_settings) as session:
        assert resolve_app_key(session, org.id, new_worker) is None
        actions = _actions(session, org.id)
        assert {"app_key.created", "app_key.regenerated", "app_key.viewed", "app_key.revoked"} <= set(actions)
    with pytest.raises(accounts.AccountError), session_scope(control_settings) as session:
        accounts.revoke_app_key(session, worker_row.id)


def test_set_quota(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        accounts.set_quota(session, org.id, events_per_minute=120, requests_per_second=3)
    with session_scope(control_settings) as session:
        identity_org = accounts.organization_by_name(session, "ACME")
        assert (identity_org.events_per_minute, identity_org.requests_per_second) == (120, 3)
        assert _actions(session, org.id)[-1] == "quota.changed"
    with (
        pytest.raises(accounts.AccountError, match="events-per-minute"),
        session_scope(control_settings) as session,
    ):
        accounts.set_quota(session, org.id, events_per_minute=0)
