"""An issue's history in time order: status changes from the warehouse, assignments and comments from the
control store, and nothing of another organization's."""

from __future__ import annotations

import time

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.issues.assignees import assign_text
from stacklens.issues.comments import add_comment
from stacklens.issues.timeline import timeline
from stacklens.issues.workflow import change_status
from stacklens.settings import Settings
from tests.stacklens.issues.test_workflow import add_events


def test_status_assignment_and_comments_interleave(control_settings: Settings, make_org, client) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    org, project = mine["org_id"], mine["project_id"]
    issue = 123456789
    add_events(client, 1)  # the workflow tests' issue: org 7, project 70
    with session_scope(control_settings) as session:
        accounts.add_member(session, org, "alice@example.test", "password-123")
        add_comment(session, org, project, issue, "first", author="alice@example.test", author_user_id=None)
    time.sleep(0.01)
    # The status change is written for the comment's organization and project.
    change_status(
        client, org_id=org, project_id=project, issue_id=issue, status="resolved", actor="bob@e.test"
    )
    time.sleep(0.01)
    with session_scope(control_settings) as session:
        assign_text(session, org, project, issue, "alice@example.test", actor="bob@e.test")
        add_comment(session, org, project, issue, "@alice yours", author="bob@e.test", author_user_id=None)
    with session_scope(control_settings) as session:
        items = timeline(session, client, org, project, issue)
        assert [i.kind for i in items] == ["comment", "status", "assigned", "comment"]
        assert items[1].status is not None and items[1].status["to_status"] == "resolved"
        assert items[2].assignee == "alice@example.test" and items[2].actor == "bob@e.test"
        assert items[3].comment is not None and items[3].comment.mentions == ("alice@example.test",)
        assert [i.at for i in items] == sorted(i.at for i in items)
        assert timeline(session, client, theirs["org_id"], project, issue) == []
