"""Issue comments (SQLite and PostgreSQL): stored as written, shown rendered, mentions of members, edits and
deletes by their author only, and organization scope."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from stacklens.errors import Forbidden, InvalidInput, NotFound
from stacklens.issues.comments import add_comment, delete_comment, edit_comment, list_comments
from stacklens.settings import Settings


def test_comment_lifecycle(control_settings: Settings, make_org) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    org, project = mine["org_id"], mine["project_id"]
    with session_scope(control_settings) as session:
        alice = accounts.add_member(session, org, "alice@example.test", "password-123")
        accounts.add_member(session, theirs["org_id"], "carol@example.test", "password-123")
        body = "@alice look: <b>x</b> and @carol"
        row = add_comment(session, org, project, 5, body, author="bob@example.test", author_user_id=None)
        assert row.body == body and row.mentions == ("alice@example.test",)  # carol is not a member here
        assert "&lt;b&gt;" in row.html and '<span class="mention">@alice</span>' in row.html
        with pytest.raises(InvalidInput, match="body"):
            add_comment(session, org, project, 5, " \n ", author="bob@example.test", author_user_id=None)
        with pytest.raises(Forbidden):
            edit_comment(session, org, project, 5, row.id, "mine now", author="alice@example.test")
        with pytest.raises(Forbidden):
            delete_comment(session, org, project, 5, row.id, author="alice@example.test")
        with pytest.raises(NotFound):  # another organization, another issue: no such comment
            edit_comment(session, theirs["org_id"], project, 5, row.id, "x", author="bob@example.test")
        with pytest.raises(NotFound):
            delete_comment(session, org, project, 6, row.id, author="bob@example.test")
        edited = edit_comment(session, org, project, 5, row.id, "done", author="bob@example.test")
        assert edited.html == "<p>done</p>\n" and edited.edited_at is not None and edited.mentions == ()
        second = add_comment(
            session, org, project, 5, "two", author="alice@example.test", author_user_id=alice.id
        )
        assert [c.body for c in list_comments(session, org, project, 5)] == ["done", "two"]
        assert list_comments(session, theirs["org_id"], project, 5) == []
        delete_comment(session, org, project, 5, second.id, author="alice@example.test")
        assert [c.id for c in list_comments(session, org, project, 5)] == [row.id]
        logged = session.scalars(
            select(ActivityEntry.action).where(
                ActivityEntry.org_id == org, ActivityEntry.action.like("issue.%")
            )
        ).all()
        assert sorted(logged) == sorted(
            ["issue.commented", "issue.comment_edited", "issue.commented", "issue.comment_deleted"]
        )
