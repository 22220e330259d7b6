"""What travels through the front door (stacklens/ingest/landing.py): a request's landing answered once done,
the same event in two requests kept once, and a flush's inserts in landing order (spans before their
transactions, batch records last)."""

from __future__ import annotations

import threading
from collections import defaultdict

import pytest

from stacklens.ingest.batch_result import BatchResult
from stacklens.ingest.landing import Blocks, Landing, inserts_of, keep_fresh
from stacklens.ingest.prepared_rows import Attribution, Prepared, encode_row

WHO = Attribution(project_id=7, service=None, app_key_id=3)


def _landing(*event_ids: str, transaction: str = "") -> Landing:
    prepared = Prepared()
    for event_id in event_ids:
        row = {"project_id": 7, "event_id": event_id, "timestamp": "2026-11-02 10:00:00"}
        prepared.tables["events"].append(encode_row(WHO, "events", row, [], prepared))
    if transaction:
        row = {"project_id": 7, "event_id": transaction, "timestamp": "2026-11-01 00:00:01"}
        span = {"span_id": "s1", "timestamp": "2026-10-31 23:59:59"}  # a span of the month before
        prepared.tables["transactions"].append(encode_row(WHO, "transactions", row, [span], prepared))
    return Landing(
        org_id=1, batch_id="b", keyed=False, prepared=prepared, received=0.0, result=BatchResult("b")
    )


def test_a_landing_is_answered_once_done_or_raises_its_refusal() -> None:
    called = threading.Event()
    landing = _landing("e1")
    landing.on_done = called.set
    assert landing.rows == 2  # its event and its batch record
    landing.finish()
    assert landing.done.is_set() and called.is_set() and landing.answer() is landing.result
    landing.error = ValueError("the key was used with other bytes")
    with pytest.raises(ValueError, match="other bytes"):
        landing.answer()


def test_the_same_event_in_two_requests_lands_once_and_spans_go_first() -> None:
    first, second = _landing("e1", "e2", transaction="t1"), _landing("e2", "e3")
    known: dict[tuple[int, str], set[str]] = {(1, "events"): {"7:e3"}}  # e3 is stored already
    blocks: Blocks = defaultdict(list)
    added = defaultdict(set)
    for landing in (first, second):
        keep_fresh(landing, known, blocks, added, [])
    assert (first.result.accepted, first.result.duplicates) == (3, 0)
    assert (second.result.accepted, second.result.duplicates) == (0, 2)
    assert first.result.events_by_app_key == {3: 3} and second.result.events_by_app_key == {}
    assert added[(1, "events")] == {"7:e1", "7:e2"} and added[(1, "transactions")] == {"7:t1"}

    inserts = inserts_of("flush-1", blocks, [b'{"batch_id":"b"}'])
    assert [(i.table, i.partition) for i in inserts] == [
        ("spans", "2026-10"),
        ("transactions", "2026-11"),
        ("events", "2026-11"),
        ("ingest_batches", ""),
    ]
    events = inserts[2]
    assert events.keys == ((1, 7, "e1"), (1, 7, "e2")) and len(events.rows) == 2
    assert inserts[0].keys == ()  # spans are keyed by their transaction
    assert [i.token for i in inserts] == [
        "flush-1:spans:2026-10:0",
        "flush-1:transactions:2026-11:1",
        "flush-1:events:2026-11:2",
        "flush-1:ingest_batches:3",
    ]


def test_rows_left_for_the_drain_to_check_are_not_blocks() -> None:
    landing = _landing("e1", transaction="t1")
    unchecked: list = []
    keep_fresh(landing, {}, None, defaultdict(set), unchecked)
    assert sorted(u.table for u in unchecked) == ["events", "transactions"]
    assert landing.result.accepted == 2
