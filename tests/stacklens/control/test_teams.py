"""Teams on SQLite and PostgreSQL: slugs, members from the organization only, and what an assignee's text
names (never a member or team of another organization)."""

from __future__ import annotations

import pytest

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.teams import create_team, list_teams, resolve_assignee, set_members, teams_of_user
from stacklens.errors import Conflict, InvalidInput, NotFound
from stacklens.settings import Settings


def test_teams_members_and_assignees(control_settings: Settings, make_org) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    with session_scope(control_settings) as session:
        alice = accounts.add_member(session, mine["org_id"], "Alice@Example.test", "password-123")
        outsider = accounts.add_member(session, theirs["org_id"], "out@example.test", "password-123")
        team = create_team(session, mine["org_id"], "#Payments", "Payments")
        assert team.slug == "payments"
        create_team(session, theirs["org_id"], "payments")  # the same slug in another organization is its own
        with pytest.raises(Conflict, match="a team #payments already exists"):
            create_team(session, mine["org_id"], "payments")
        with pytest.raises(InvalidInput, match="slug"):
            create_team(session, mine["org_id"], "no spaces")
        with pytest.raises(NotFound, match=r"out@example\.test"):
            set_members(session, mine["org_id"], "payments", ["out@example.test"])
        row = set_members(session, mine["org_id"], "payments", ["ALICE@example.test", "alice@example.test"])
        assert row.members == ("alice@example.test",)
        assert [t.members for t in list_teams(session, mine["org_id"])] == [("alice@example.test",)]
        assert [t.members for t in list_teams(session, theirs["org_id"])] == [()]
        assert teams_of_user(session, mine["org_id"], alice.id) == [team.id]
        assert teams_of_user(session, theirs["org_id"], alice.id) == []

        assert resolve_assignee(session, mine["org_id"], " alice@EXAMPLE.test ").user_id == alice.id
        named = resolve_assignee(session, mine["org_id"], "#payments")
        assert named.team_id == team.id and named.label == "#payments"
        with pytest.raises(NotFound):
            resolve_assignee(session, mine["org_id"], "out@example.test")
        with pytest.raises(NotFound):
            resolve_assignee(session, theirs["org_id"], "alice@example.test")
        with pytest.raises(NotFound):
            resolve_assignee(session, mine["org_id"], "#nope")
        with pytest.raises(InvalidInput, match="assignee"):
            resolve_assignee(session, mine["org_id"], "alice")
        assert outsider.id != alice.id
        # Emptying a team keeps it.
        assert set_members(session, mine["org_id"], "payments", []).members == ()
