"""The four roles' boundaries in the control store (stacklens.control.roles): an owner does anything; an
admin manages admins, members and viewers, gives roles up to admin, and never makes, demotes or removes an
owner (nor withdraws an owner's invitation); members and viewers manage nobody. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from itsdangerous import Signer
from sqlalchemy import select

from stacklens.control import accounts, invitations, roles
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError
from stacklens.control.models import Invitation, User
from stacklens.control.roles import RoleRefused
from stacklens.settings import Settings

SIGNER = Signer(b"one secret", salt="stacklens.invitations")
PASSWORD = "password-123"


def test_what_each_role_may_do() -> None:
    assert roles.ROLES == ("owner", "admin", "member", "viewer")
    assert [roles.manages(r) for r in roles.ROLES] == [True, True, False, False]
    assert [roles.writes(r) for r in roles.ROLES] == [True, True, True, False]
    assert roles.writes(None) is False and roles.manages("superuser") is False
    assert roles.grantable("owner") == roles.ROLES
    assert roles.grantable("admin") == ("admin", "member", "viewer")
    assert roles.grantable("member") == () and roles.grantable("viewer") == ()
    assert roles.may_change("owner", "owner", None) is None
    assert roles.may_change("admin", "member", "admin") is None
    assert roles.may_change("admin", "viewer", None) is None
    assert roles.may_change("admin", "owner", "member") == "only an owner can change or remove an owner"
    assert roles.may_change("admin", "member", "owner") == "only an owner can make someone an owner"
    assert roles.may_change("member", "viewer", "member") == "only owners and admins manage members"


def _org(settings: Settings) -> tuple[int, dict[str, int]]:
    with session_scope(settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@acme.test", PASSWORD)
        people = {"owner": session.scalar(select(User.id).where(User.email == "owner@acme.test")) or 0}
        for role in ("admin", "member", "viewer"):
            people[role] = accounts.add_member(session, org.id, f"{role}@acme.test", PASSWORD, role).id
        return org.id, people


def test_an_admin_changes_and_removes_anyone_but_an_owner(control_settings: Settings) -> None:
    org_id, people = _org(control_settings)
    with session_scope(control_settings) as session:
        accounts.change_role(session, org_id, people["viewer"], "admin", people["admin"], actor_role="admin")
        accounts.change_role(session, org_id, people["member"], "viewer", people["admin"], actor_role="admin")
    for target, new_role, why in (
        ("owner", "member", "only an owner can change or remove an owner"),
        ("member", "owner", "only an owner can make someone an owner"),
        ("admin", "owner", "only an owner can make someone an owner"),  # not even themself
    ):
        with pytest.raises(RoleRefused, match=why), session_scope(control_settings) as session:
            accounts.change_role(
                session, org_id, people[target], new_role, people["admin"], actor_role="admin"
            )
    with pytest.raises(RoleRefused, match="change or remove an owner"), session_scope(control_settings) as s:
        accounts.remove_member(s, org_id, people["owner"], people["admin"], actor_role="admin")
    for actor in ("member", "viewer"):
        with pytest.raises(RoleRefused, match="only owners and admins"), session_scope(control_settings) as s:
            accounts.change_role(s, org_id, people["member"], "member", people[actor], actor_role=actor)
    with session_scope(control_settings) as session:
        accounts.remove_member(session, org_id, people["member"], people["admin"], actor_role="admin")
        members = {user.email: role for user, role in accounts.list_members(session, org_id)}
    assert members == {"owner@acme.test": "owner", "admin@acme.test": "admin", "viewer@acme.test": "admin"}


def test_invitations_carry_any_role_an_actor_may_give(control_settings: Settings) -> None:
    org_id, people = _org(control_settings)
    with session_scope(control_settings) as session:
        for role in roles.ROLES:
            invited, _ = invitations.create_invitation(
                session, SIGNER, org_id, f"new-{role}@acme.test", role=role, actor_user_id=people["owner"]
            )
            assert invited.role == role
        owners_invitation = session.scalar(select(Invitation.id).where(Invitation.role == "owner"))
        invitations.create_invitation(
            session, SIGNER, org_id, "by-admin@acme.test", role="viewer", actor_role="admin"
        )
    with (
        pytest.raises(RoleRefused, match="only an owner can invite an owner"),
        session_scope(control_settings) as s,
    ):
        invitations.create_invitation(s, SIGNER, org_id, "x@acme.test", role="owner", actor_role="admin")
    with (
        pytest.raises(RoleRefused, match="only owners and admins invite"),
        session_scope(control_settings) as s,
    ):
        invitations.create_invitation(s, SIGNER, org_id, "x@acme.test", role="viewer", actor_role="member")
    unknown = "role must be one of owner, admin, member, viewer"
    with pytest.raises(AccountError, match=unknown), session_scope(control_settings) as session:
        invitations.create_invitation(session, SIGNER, org_id, "x@acme.test", role="superuser")
    with pytest.raises(RoleRefused, match="withdraw"), session_scope(control_settings) as session:
        invitations.revoke_invitation(
            session, org_id, owners_invitation or 0, people["admin"], actor_role="admin"
        )
    with session_scope(control_settings) as session:
        invitations.revoke_invitation(session, org_id, owners_invitation or 0, people["owner"])


def test_the_operator_sets_any_role_and_the_last_owner_stays(control_settings: Settings) -> None:
    org_id, _ = _org(control_settings)
    with session_scope(control_settings) as session:
        user, previous = accounts.set_role(session, org_id, "Viewer@Acme.test", "admin")
        assert (user.email, previous) == ("viewer@acme.test", "viewer")
    with pytest.raises(AccountError, match="only owner"), session_scope(control_settings) as session:
        accounts.set_role(session, org_id, "owner@acme.test", "viewer")
    with pytest.raises(AccountError, match="not a member"), session_scope(control_settings) as session:
        accounts.set_role(session, org_id, "stranger@acme.test", "viewer")
