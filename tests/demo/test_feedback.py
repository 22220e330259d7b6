"""The demo's feedback widget: about a third of the visitors who hit an error write, and what they send is
read by StackLens's envelope reading as a feedback of that error (and its replay)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from demo import browser_errors
from demo.feedback import feedback_envelope, writes_feedback
from demo.traffic import CURRENT_RELEASE
from stacklens.ingest.envelope import parse_envelope
from stacklens.ingest.envelope_lines import envelope_lines


def test_a_third_write_and_stacklens_reads_it() -> None:
    rng = random.Random(3)
    now = datetime.now(UTC)
    errors = [
        browser_errors.js_error(rng, "https://shop.example", CURRENT_RELEASE, "production", now, "u1")
        for _ in range(300)
    ]
    writers = [e for e in errors if writes_feedback(e)]
    assert 70 <= len(writers) <= 130
    error = writers[0]
    error["tags"]["replayId"] = "ab" * 16
    body = feedback_envelope("https://key@stacklens.invalid/1", error, now)
    lines = envelope_lines(parse_envelope(body), "key", now)
    assert lines.lines == b"" and len(lines.feedback) == 1
    feedback = lines.feedback[0]
    assert feedback.event_id == error["event_id"] and feedback.replay_id == "ab" * 16
    assert feedback.message and feedback.url == "https://shop.example/cart"
    assert feedback.release == CURRENT_RELEASE.name and feedback.environment == "production"


def test_a_history_feedback_says_when_it_was_written() -> None:
    """The backfill's visitors write at their moment: the widget's item carries it, and StackLens reads it."""
    rng = random.Random(5)
    at = datetime(2026, 11, 1, 19, 30, tzinfo=UTC)
    error = browser_errors.js_error(rng, "https://shop.example", CURRENT_RELEASE, "production", at, "u1")
    body = feedback_envelope("https://key@stacklens.invalid/1", error, at + timedelta(seconds=40))
    lines = envelope_lines(parse_envelope(body), "key", datetime.now(UTC))
    assert lines.feedback[0].sent_at == (at + timedelta(seconds=40)).timestamp()
