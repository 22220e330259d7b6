"""A batch's answer and its record: what a resend is answered with."""

from __future__ import annotations

import pytest

from stacklens.ingest.batch_result import MAX_REJECTED_REPORTED, BatchResult, IdempotencyKeyReused, replayed
from stacklens.ingest.writer import BatchRecord


def test_the_record_keeps_the_answer_and_caps_the_rejected_lines() -> None:
    rejected = [{"line": n, "error": "bad"} for n in range(MAX_REJECTED_REPORTED + 5)]
    result = BatchResult("b1", accepted=3, duplicates=1, skipped=2, rejected=rejected)
    record = result.record(4_000, "digest")
    assert (record.batch_id, record.lines, record.accepted, record.duplicates, record.skipped) == (
        "b1",
        4_000,
        3,
        1,
        2,
    )
    assert len(record.rejected) == MAX_REJECTED_REPORTED
    assert result.answer()["rejected"] == rejected[:MAX_REJECTED_REPORTED]


def test_a_resend_answers_the_first_figures_and_another_body_is_refused() -> None:
    record = BatchRecord("b1", 5, 4, 1, 0, [], "digest-a")
    again = replayed(record, "digest-a")
    assert (again.accepted, again.duplicates, again.replayed) == (4, 1, True)
    with pytest.raises(IdempotencyKeyReused, match='"b1" was already used for a batch with a different body'):
        replayed(record, "digest-b")
    assert replayed(BatchRecord("b1", 5, 4, 1, 0, [], ""), "digest-b").replayed  # recorded before digests
