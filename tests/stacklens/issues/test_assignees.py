"""Issue assignees in the control store (SQLite and PostgreSQL): assign, reassign, unassign, nothing written
for a change that changes nothing, history lines, the `assigned:` filters and organization scope."""

from __future__ import annotations

from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry, IssueAction
from stacklens.control.teams import create_team, resolve_assignee, set_members
from stacklens.issues.assignees import assign, assign_text, assignee_choices, assignee_filter, assignees_of
from stacklens.settings import Settings


def test_assign_history_and_filters(control_settings: Settings, make_org) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    org, project = mine["org_id"], mine["project_id"]
    with session_scope(control_settings) as session:
        alice = accounts.add_member(session, org, "alice@example.test", "password-123")
        bob = accounts.add_member(session, org, "bob@example.test", "password-123")
        create_team(session, org, "payments")
        set_members(session, org, "payments", ["bob@example.test"])
        big = 2**52 - 1  # issue ids are 52-bit
        assert assign_text(session, org, project, 1, "alice@example.test", actor="alice@example.test")
        assert not assign_text(session, org, project, 1, "alice@example.test", actor="alice@example.test")
        assert assign(session, org, project, 2, resolve_assignee(session, org, "#payments"), actor="x@e.test")
        assert assign_text(session, org, project, big, "bob@example.test", actor="bob@example.test")
        assert assign_text(session, org, project, big, None, actor="bob@example.test")
        assert not assign_text(session, org, project, big, None, actor="bob@example.test")
        assign_text(session, org, project, 3, "bob@example.test", actor="api:1", actor_user_id=None)
        assign(session, org, project, 3, None, actor="api:1")

        now = assignees_of(session, org, project, [1, 2, 3, big])
        assert {k: v.label for k, v in now.items()} == {1: "alice@example.test", 2: "#payments"}
        # Another organization's reads see nothing of it, even with this project's id.
        assert assignees_of(session, theirs["org_id"], project, [1, 2]) == {}

        actions = session.scalars(
            select(IssueAction).where(IssueAction.project_id == project).order_by(IssueAction.id)
        ).all()
        assert [(a.issue_id, a.action, a.detail["assignee"]) for a in actions] == [
            (1, "assigned", "alice@example.test"),
            (2, "assigned", "#payments"),
            (big, "assigned", "bob@example.test"),
            (big, "unassigned", "bob@example.test"),
            (3, "assigned", "bob@example.test"),
            (3, "unassigned", "bob@example.test"),
        ]
        logged = session.scalars(
            select(ActivityEntry.action).where(
                ActivityEntry.org_id == org, ActivityEntry.action.like("issue.%")
            )
        ).all()
        assert logged.count("issue.assigned") == 4 and logged.count("issue.unassigned") == 2

        def ids(value: str, user_id: int | None) -> tuple[list[int] | None, set[int]]:
            found = assignee_filter(session, org, project, value, user_id)
            return found.only, set(found.exclude)

        assert ids("", alice.id) == (None, set())
        assert ids("none", alice.id) == (None, {1, 2})
        assert ids("me", alice.id)[0] == [1]
        assert sorted(ids("me", bob.id)[0] or []) == [2]  # through the team
        assert ids("#payments", None)[0] == [2]
        assert ids("alice@example.test", None)[0] == [1]
        assert ids("#nope", None)[0] == []
        assert assignee_filter(session, theirs["org_id"], project, "none", None).exclude == ()
        assert assignee_choices(session, org)[-1] == ("#payments", "#payments (team)")
        assert ("alice@example.test", "alice@example.test") in assignee_choices(session, org)
        assert all(not v.startswith("alice") for v, _ in assignee_choices(session, theirs["org_id"]))
