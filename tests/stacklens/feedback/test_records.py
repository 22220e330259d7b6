"""Feedback rows: kept once by their id, listed newest first with their filters, deleted by retention."""

from __future__ import annotations

from dataclasses import replace
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


def test_a_feedback_is_listed_when_it_was_written(org: dict[str, Any]) -> None:
    """A widget's feedback keeps the time its item says it was written (the demo's history, a page that sent
    it after an outage), as an event keeps its own; a time an event could not be stored under — past the
    retention, ahead of the receiving clock — or none at all is replaced by the arrival."""
    settings, org_id, project_id = org["settings"], org["org_id"], org["project_id"]
    received = datetime.now(UTC).replace(microsecond=0)
    written = received - timedelta(days=3, minutes=7)
    sent = {
        10: written.timestamp(),
        11: (received - timedelta(days=40)).timestamp(),
        12: (received + timedelta(hours=1)).timestamp(),
        13: None,
    }
    with session_scope(settings) as session:
        items = [replace(_item(n), sent_at=at) for n, at in sent.items()]
        record_feedback(session, org_id, project_id, items, received, retention_days=30)
        when = {
            r.message: r.received_at for r in feedback_rows(session, org_id, project_id, FeedbackFilter())
        }
    assert when["message 10"].timestamp() == written.timestamp()
    assert [when[f"message {n}"].timestamp() for n in (11, 12, 13)] == [received.timestamp()] * 3
