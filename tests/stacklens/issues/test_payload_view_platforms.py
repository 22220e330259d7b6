"""The issue view of other platforms' events: stacks under `threads`, native frames with packages and
addresses, JVM modules, and messages shown as text, never as raw JSON."""

from __future__ import annotations

from stacklens.issues import payload_exceptions
from stacklens.issues import payload_view as ev


def test_messages_are_text() -> None:
    assert ev.message_text({"message": {"message": "disk %s full", "params": ["/var"]}}) == "disk /var full"
    assert ev.message_text({"message": {"formatted": "already formatted"}}) == "already formatted"
    assert (
        ev.message_text({"logentry": {"message": "bad %d", "params": ["x"]}}) == "bad %d"
    )  # wrong params: template
    assert ev.message_text({"message": "plain"}) == "plain"
    (entry,) = payload_exceptions.exceptions({"message": {"message": "disk %s full", "params": ["/var"]}})
    assert entry["value"] == "disk /var full" and "{" not in entry["value"]
