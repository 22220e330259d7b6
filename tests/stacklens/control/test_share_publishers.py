"""Who may publish public share links, and a link's life on its publisher's membership (issue #62): owners
only by default, every member once an owner says so; a removed member's issue and dashboard links are revoked
with the membership, and every open checks the publisher again (a membership ended another way, a setting
tightened); links made with the organization's API key speak for the owners."""

from __future__ import annotations

from typing import Any

import pytest
from itsdangerous import Signer
from sqlalchemy import delete, select

from stacklens.control import accounts, share_links
from stacklens.control.activity import list_activity
from stacklens.control.activity_text import describe
from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry, Membership, User
from stacklens.control.share_publishers import (
    PublishRefused,
    publisher_allowed,
    set_share_links_by,
    share_links_by,
)
from stacklens.errors import InvalidInput
from stacklens.explore import dashboard_shares
from stacklens.explore.dashboards import create_dashboard
from stacklens.settings import Settings

SIGNER = Signer(b"one secret", salt="stacklens.share-link")


def _people(settings: Settings, org: dict[str, Any]) -> tuple[int, int]:
    """The owner's id and a new member's."""
    with session_scope(settings) as session:
        member = accounts.add_member(session, int(org["org_id"]), "member@example.test", "password-123")
        owner = session.scalar(select(User.id).where(User.email == org["email"]))
        assert owner is not None
        return owner, member.id


def _publish(settings: Settings, org: dict[str, Any], user_id: int | None) -> tuple[str, str]:
    """An issue link and a dashboard link published by ``user_id``: their tokens."""
    org_id = int(org["org_id"])
    with session_scope(settings) as session:
        _, issue_token = share_links.create_link(
            session,
            SIGNER,
            org_id=org_id,
            project_id=int(org["project_id"]),
            issue_id=42,
            user_id=user_id,  # None: the API key's, as dashboards allow
            expires_days=30,
        )
        board = create_dashboard(session, org_id, {"name": f"Vitals {user_id}"})
        _, board_token = dashboard_shares.create_share(session, org_id, board.id, 365, user_id)
        return issue_token, board_token


def _open(settings: Settings, tokens: tuple[str, str]) -> list[bool]:
    """Whether each link opens now."""
    opened = []
    with session_scope(settings) as session:
        try:
            opened.append(share_links.open_link(session, SIGNER, tokens[0]) is not None)
        except share_links.LinkGone:
            opened.append(False)
        try:
            dashboard_shares.open_share(session, tokens[1])
            opened.append(True)
        except dashboard_shares.ShareGone:
            opened.append(False)
    return opened


def test_owners_only_by_default_and_members_once_an_owner_says_so(
    control_settings: Settings, make_org
) -> None:
    org = make_org("Acme")
    org_id = int(org["org_id"])
    owner, member = _people(control_settings, org)
    with session_scope(control_settings) as session:
        assert share_links_by(session, org_id) == "owners"
    with pytest.raises(PublishRefused, match="only the organization's owners and admins may publish"):
        _publish(control_settings, org, member)
    assert _open(control_settings, _publish(control_settings, org, owner)) == [True, True]
    with session_scope(control_settings) as session:
        with pytest.raises(InvalidInput, match="owners, members"):
            set_share_links_by(session, org_id, "admins", owner)
        assert set_share_links_by(session, org_id, "members", owner) == "members"
        logged = session.scalars(
            select(ActivityEntry).where(ActivityEntry.action == "share_links.publishers_changed")
        ).all()
        assert [(row.actor_user_id, row.detail) for row in logged] == [
            (owner, {"from": "owners", "to": "members"})
        ]
        rows, _ = list_activity(session, org_id)
        [read] = [row for row in rows if row.action == "share_links.publishers_changed"]
        assert describe(read) == (
            "Let every member publish share links; a link stops working when its publisher no longer may."
        )
    assert _open(control_settings, _publish(control_settings, org, member)) == [True, True]


def test_a_removed_members_links_stop_working_and_stay_revoked(control_settings: Settings, make_org) -> None:
    org = make_org("Acme")
    org_id = int(org["org_id"])
    owner, member = _people(control_settings, org)
    with session_scope(control_settings) as session:
        set_share_links_by(session, org_id, "members", owner)
    theirs = _publish(control_settings, org, member)
    owners = _publish(control_settings, org, owner)
    keys = _publish(control_settings, org, None)  # the organization's API key
    with session_scope(control_settings) as session:
        accounts.remove_member(session, org_id, member, owner)
    assert _open(control_settings, theirs) == [False, False]
    assert _open(control_settings, owners) == [True, True] and _open(control_settings, keys) == [True, True]
    with session_scope(control_settings) as session:
        (listed,) = [
            link
            for link in share_links.issue_links(session, org_id, int(org["project_id"]), 42)
            if link.created_by == "member@example.test"
        ]
        assert listed.state == "revoked"
        # Back in the organization, their old links stay revoked: they were not re-published.
        accounts.add_member(session, org_id, "member@example.test", "password-123")
    assert _open(control_settings, theirs) == [False, False]


def test_every_open_checks_the_publisher_again(control_settings: Settings, make_org) -> None:
    org = make_org("Acme")
    org_id = int(org["org_id"])
    owner, member = _people(control_settings, org)
    with session_scope(control_settings) as session:
        set_share_links_by(session, org_id, "members", owner)
    theirs = _publish(control_settings, org, member)
    # Tightened after the links were made: they stop; loosened again, they work until they expire.
    with session_scope(control_settings) as session:
        set_share_links_by(session, org_id, "owners", owner)
    assert _open(control_settings, theirs) == [False, False]
    with session_scope(control_settings) as session:
        set_share_links_by(session, org_id, "members", owner)
    assert _open(control_settings, theirs) == [True, True]
    # A membership ended without remove_member (a store edited by hand, a future path): the open refuses.
    with session_scope(control_settings) as session:
        session.execute(delete(Membership).where(Membership.user_id == member))
    assert _open(control_settings, theirs) == [False, False]
    with session_scope(control_settings) as session:
        assert not publisher_allowed(session, org_id, member)
        assert publisher_allowed(session, org_id, owner) and publisher_allowed(session, org_id, None)


def test_admins_publish_as_owners_and_viewers_never(control_settings: Settings, make_org) -> None:
    org = make_org("Acme")
    org_id = int(org["org_id"])
    owner, _ = _people(control_settings, org)
    with session_scope(control_settings) as session:
        admin = accounts.add_member(session, org_id, "admin@example.test", "password-123", "admin").id
        viewer = accounts.add_member(session, org_id, "viewer@example.test", "password-123", "viewer").id
    # "owners" lets admins publish; a viewer is refused under either setting.
    admins = _publish(control_settings, org, admin)
    assert _open(control_settings, admins) == [True, True]
    for setting in ("owners", "members"):
        with session_scope(control_settings) as session:
            set_share_links_by(session, org_id, setting, owner)
            assert publisher_allowed(session, org_id, viewer) is False
            assert publisher_allowed(session, org_id, admin) is True
        with pytest.raises(PublishRefused, match="viewers never do"):
            _publish(control_settings, org, viewer)
    # An admin made a viewer: their links stop at the next open.
    with session_scope(control_settings) as session:
        accounts.change_role(session, org_id, admin, "viewer", owner)
    assert _open(control_settings, admins) == [False, False]
