"""An issue's history lines: one `issue_actions` row and one activity entry per line, in the caller's
transaction (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry, IssueAction
from stacklens.issues.history import append_history
from stacklens.settings import Settings


def test_a_history_line_is_an_issue_action_and_an_activity_entry(
    control_settings: Settings, make_org
) -> None:
    org = make_org("Mine")
    big = 2**52 - 1  # issue ids are 52-bit: kept whole in the detail, not in the 32-bit target column
    at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    with session_scope(control_settings) as session:
        append_history(
            session,
            org["org_id"],
            org["project_id"],
            big,
            "merged",
            actor="a@e.test",
            actor_user_id=None,
            detail={"merged": ["7"]},
            at=at,
        )
    with session_scope(control_settings) as session:
        [line] = session.scalars(select(IssueAction).where(IssueAction.org_id == org["org_id"]))
        assert (line.issue_id, line.action, line.actor, line.detail) == (
            big,
            "merged",
            "a@e.test",
            {"merged": ["7"]},
        )
        assert line.at.replace(tzinfo=UTC) == at
        entry = session.scalars(
            select(ActivityEntry)
            .where(ActivityEntry.org_id == org["org_id"])
            .order_by(ActivityEntry.id.desc())
        ).first()
        assert entry is not None and entry.action == "issue.merged" and entry.target_id is None
        assert entry.detail == {
            "merged": ["7"],
            "issue_id": str(big),
            "project_id": org["project_id"],
            "actor": "a@e.test",
        }


def test_a_history_line_rolls_back_with_its_transaction(control_settings: Settings, make_org) -> None:
    org = make_org("Mine")
    try:
        with session_scope(control_settings) as session:
            append_history(
                session,
                org["org_id"],
                org["project_id"],
                5,
                "split",
                actor="x",
                actor_user_id=None,
                detail={},
            )
            raise RuntimeError("the caller's work failed")
    except RuntimeError:
        pass
    with session_scope(control_settings) as session:
        assert session.scalars(select(IssueAction).where(IssueAction.org_id == org["org_id"])).first() is None
