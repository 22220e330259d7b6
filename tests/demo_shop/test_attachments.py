"""The shop's attachment envelope: read by StackLens's envelope reading as one attachment of the event;
nothing is sent before the shop is told where to."""

from __future__ import annotations

from datetime import UTC, datetime

from demo_shop import attachments
from stacklens.ingest.envelope import parse_envelope
from stacklens.ingest.envelope_lines import envelope_lines


def test_the_envelope_and_the_switch() -> None:
    body = attachments.attachment_envelope("e" * 32, "order.json", "application/json", b'{"items": []}')
    lines = envelope_lines(parse_envelope(body), "key", datetime.now(UTC))
    assert lines.event_id == "e" * 32 and lines.lines == b""
    [item] = lines.attachments
    assert (item.filename, item.content_type, item.data) == (
        "order.json",
        "application/json",
        b'{"items": []}',
    )
    # A history request's attachment says the moment it stands for: StackLens keeps it under that time.
    moment = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)
    dated = attachments.attachment_envelope("e" * 32, "order.json", "application/json", b"{}", moment)
    assert envelope_lines(parse_envelope(dated), "key", datetime.now(UTC)).sent_at == moment.timestamp()
    assert lines.sent_at is not None and abs(lines.sent_at - datetime.now(UTC).timestamp()) < 60
    attachments.configure(None, "key")
    attachments.attach("e" * 32, "x", "text/plain", b"x")  # not configured: nothing happens, nothing raises
