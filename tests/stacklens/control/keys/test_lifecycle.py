from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.auth import resolve_app_key, verify_api_key
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError
from stacklens.control.keys.lifecycle import (
    NextKeyExists,
    create_app_key,
    create_next_api_key,
    list_app_keys,
    next_api_key,
    regenerate_api_key,
    regenerate_app_key,
    reveal_api_key,
    reveal_app_key,
    revoke_app_key,
)
from stacklens.control.models import ActivityEntry, ApiKey, AppKey
from stacklens.control.projects import create_project
from stacklens.settings import Settings


def _actions(session, org_id: int) -> list[str]:
    return list(
        session.scalars(
            select(ActivityEntry.action).where(ActivityEntry.org_id == org_id).order_by(ActivityEntry.id)
        )
    )


def test_api_key_regeneration_refuses_the_old_value(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, old = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
    with session_scope(control_settings) as session:
        identity = verify_api_key(session, old)
        assert identity is not None and identity.org_name == "Acme" and identity.created_at.tzinfo is not None
    with session_scope(control_settings) as session:
        new = regenerate_api_key(session, org.id)
    with session_scope(control_settings) as session:
        assert verify_api_key(session, old) is None
        assert verify_api_key(session, new).org_id == org.id
        assert reveal_api_key(session, org.id, None) == new
        assert _actions(session, org.id)[-2:] == ["api_key.regenerated", "api_key.viewed"]
        assert (
            session.scalar(select(ApiKey).where(ApiKey.org_id == org.id, ApiKey.revoked_at.is_(None))).last4
            == new[-4:]
        )


def test_a_next_api_key_works_beside_the_current_one_until_regeneration_promotes_it(
    control_settings: Settings,
) -> None:
    with session_scope(control_settings) as session:
        org, current = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        _, upcoming = create_next_api_key(session, org.id)
    with pytest.raises(NextKeyExists), session_scope(control_settings) as session:
        create_next_api_key(session, org.id)
    with session_scope(control_settings) as session:
        assert verify_api_key(session, current) is not None and verify_api_key(session, upcoming) is not None
        assert reveal_api_key(session, org.id, None, next_key=True) == upcoming
        assert regenerate_api_key(session, org.id) == upcoming
    with session_scope(control_settings) as session:
        assert verify_api_key(session, current) is None
        assert verify_api_key(session, upcoming).org_id == org.id
        assert next_api_key(session, org.id) is None


def test_app_key_lifecycle(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "a@b.co", "password-1")
        other, _ = accounts.create_organization(session, "Other", "o@b.co", "password-1")
        project, primary = create_project(session, org.id, "Web")
        worker = create_app_key(session, project.id, "worker")
    assert worker.startswith("stacklens_app_worker_")
    with session_scope(control_settings) as session:
        found = resolve_app_key(session, org.id, worker)
        assert (found.project_id, found.service) == (project.id, "worker")
        assert resolve_app_key(session, org.id, primary).service is None
        assert resolve_app_key(session, other.id, primary) is None  # another organization's key
        assert [k.service for k in list_app_keys(session, project.id)] == [None, "worker"]
        assert all(
            primary not in k.masked and worker not in k.masked for k in list_app_keys(session, project.id)
        )
    with (
        pytest.raises(AccountError, match="already has"),
        session_scope(control_settings) as session,
    ):
        create_app_key(session, project.id, "worker")
    with (
        pytest.raises(AccountError, match="invalid service"),
        session_scope(control_settings) as session,
    ):
        create_app_key(session, project.id, "Bad_Name")
    with session_scope(control_settings) as session:
        new_worker = regenerate_app_key(session, project.id, "worker")
        new_primary = regenerate_app_key(session, project.id)
    with session_scope(control_settings) as session:
        assert resolve_app_key(session, org.id, worker) is None
        assert resolve_app_key(session, org.id, primary) is None
        assert resolve_app_key(session, org.id, new_worker).service == "worker"
        assert reveal_app_key(session, project.id, None) == new_primary
        worker_row = session.scalar(
            select(AppKey).where(AppKey.service == "worker", AppKey.revoked_at.is_(None))
        )
        revoke_app_key(session, worker_row.id)
    with session_scope(control_settings) as session:
        assert resolve_app_key(session, org.id, new_worker) is None
        actions = _actions(session, org.id)
        assert {"app_key.created", "app_key.regenerated", "app_key.viewed", "app_key.revoked"} <= set(actions)
    with pytest.raises(AccountError), session_scope(control_settings) as session:
        revoke_app_key(session, worker_row.id)
