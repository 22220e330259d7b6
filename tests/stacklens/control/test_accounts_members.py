"""Members in the control store (SQLite and PostgreSQL): list, add (actor logged), remove, and the last owner
can neither be removed nor demoted."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.models import ActivityEntry
from stacklens.settings import Settings


def test_list_add_remove_and_last_owner(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@b.co", "password-1")
        first = accounts.list_members(session, org.id)[0][0]
        member = accounts.add_member(session, org.id, "m@b.co", "password-2", actor_user_id=first.id)
        org_id, owner_id, member_id = org.id, first.id, member.id
    with session_scope(control_settings) as session:
        listed = [(user.email, role) for user, role in accounts.list_members(session, org_id)]
        assert listed == [("m@b.co", "member"), ("owner@b.co", "owner")]
        entry = session.scalar(select(ActivityEntry).where(ActivityEntry.action == "member.added"))
        assert entry.actor_user_id == owner_id and entry.detail == {"email": "m@b.co", "role": "member"}

    with pytest.raises(AccountError, match="last owner"), session_scope(control_settings) as session:
        accounts.remove_member(session, org_id, owner_id)
    with (
        pytest.raises(AccountError, match="at least one owner"),
        session_scope(control_settings) as session,
    ):
        accounts.add_member(session, org_id, "owner@b.co", "", role="member")
    with pytest.raises(AccountError, match="no member"), session_scope(control_settings) as session:
        accounts.remove_member(session, org_id, 999_999)

    with session_scope(control_settings) as session:
        accounts.remove_member(session, org_id, member_id, actor_user_id=owner_id)
    with session_scope(control_settings) as session:
        assert [user.email for user, _ in accounts.list_members(session, org_id)] == ["owner@b.co"]
        # The account stays (it may belong to other organizations); only the membership went.
        assert accounts.authenticate_user(session, "m@b.co", "password-2") is not None
        actions = list(session.scalars(select(ActivityEntry.action).where(ActivityEntry.org_id == org_id)))
        assert actions.count("member.removed") == 1

    # With a second owner, the first can step down or leave.
    with session_scope(control_settings) as session:
        accounts.add_member(session, org_id, "m@b.co", "ignored-password", role="owner")
    with session_scope(control_settings) as session:
        accounts.add_member(session, org_id, "owner@b.co", "", role="member")
        accounts.remove_member(session, org_id, owner_id)
    with session_scope(control_settings) as session:
        assert [(u.email, r) for u, r in accounts.list_members(session, org_id)] == [("m@b.co", "owner")]


def test_change_role_logs_and_keeps_the_last_owner(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@b.co", "password-1")
        owner = accounts.list_members(session, org.id)[0][0]
        member = accounts.add_member(session, org.id, "m@b.co", "password-2")
        org_id, owner_id, member_id = org.id, owner.id, member.id

    with pytest.raises(AccountError, match="only owner"), session_scope(control_settings) as session:
        accounts.change_role(session, org_id, owner_id, "member", actor_user_id=owner_id)
    with (
        pytest.raises(AccountError, match="role must be"),
        session_scope(control_settings) as session,
    ):
        accounts.change_role(session, org_id, member_id, "superuser")
    with pytest.raises(AccountNotFound), session_scope(control_settings) as session:
        accounts.change_role(session, org_id, 999_999, "owner")

    with session_scope(control_settings) as session:
        user, previous = accounts.change_role(session, org_id, member_id, "owner", actor_user_id=owner_id)
        assert (user.email, previous) == ("m@b.co", "member")
    # Two owners now: the first may step down; the same role again changes and logs nothing.
    with session_scope(control_settings) as session:
        accounts.change_role(session, org_id, owner_id, "member", actor_user_id=owner_id)
        accounts.change_role(session, org_id, owner_id, "member", actor_user_id=owner_id)
    with session_scope(control_settings) as session:
        roles = {u.email: r for u, r in accounts.list_members(session, org_id)}
        assert roles == {"m@b.co": "owner", "owner@b.co": "member"}
        entries = session.scalars(
            select(ActivityEntry)
            .where(ActivityEntry.action == "member.role_changed")
            .order_by(ActivityEntry.id)
        ).all()
        assert [(e.actor_user_id, e.detail) for e in entries] == [
            (owner_id, {"email": "m@b.co", "from": "member", "to": "owner"}),
            (owner_id, {"email": "owner@b.co", "from": "owner", "to": "member"}),
        ]
