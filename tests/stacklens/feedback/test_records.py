"""Feedback rows: kept once by their id, listed newest first with their filters, deleted by retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.control.db import session_scope
from stacklens.feedback.items import FeedbackIn
from stacklens.feedback.records import (
    FeedbackFilter,
    delete_feedback_before,
    event_ids_with_feedback,
    feedback_rows,
    record_feedback,
)


def _item(n: int, release: str = "", replay: str = "", event: str = "") -> FeedbackIn:
    return FeedbackIn(
        f"{n:032x}", "feedback", event, replay, "Ada", "a@x.test", f"message {n}", release=release
    )


def test_record_filter_and_delete(org: dict[str, Any]) -> None:
    settings, org_id, project_id = org["settings"], org["org_id"], org["project_id"]
    now = datetime.now(UTC)
    with session_scope(settings) as session:
        items = [_item(1, "1.0", event="a" * 32), _item(2, "2.0", "b" * 32), _item(3, "2.0", event="c" * 32)]
        for i, item in enumerate(items):
            record_feedback(session, org_id, project_id, [item], now + timedelta(seconds=i))
        assert record_feedback(session, org_id, project_id, [items[0]]) == []  # sent again: kept once
        rows = feedback_rows(session, org_id, project_id, FeedbackFilter())
        assert [r.message for r in rows] == ["message 3", "message 2", "message 1"]
        assert [
            r.message for r in feedback_rows(session, org_id, project_id, FeedbackFilter(release="2.0"))
        ] == [
            "message 3",
            "message 2",
        ]
        with_replay = feedback_rows(session, org_id, project_id, FeedbackFilter(has_replay=True))
        assert [r.message for r in with_replay] == ["message 2"]
        without = feedback_rows(session, org_id, project_id, FeedbackFilter(has_replay=False))
        assert len(without) == 2
        chosen = feedback_rows(session, org_id, project_id, FeedbackFilter(event_ids=frozenset({"a" * 32})))
        assert [r.message for r in chosen] == ["message 1"]
        assert feedback_rows(session, org_id, project_id, FeedbackFilter(event_ids=frozenset())) == []
        assert feedback_rows(session, org_id + 1, project_id, FeedbackFilter()) == []  # another organization
        assert event_ids_with_feedback(session, org_id, project_id) == ["c" * 32, "a" * 32]
        assert delete_feedback_before(session, project_id, now + timedelta(seconds=1, milliseconds=500)) == 2
        assert [r.message for r in feedback_rows(session, org_id, project_id, FeedbackFilter())] == [
            "message 3"
        ]
