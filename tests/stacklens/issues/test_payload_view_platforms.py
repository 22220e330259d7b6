"""The issue view of other platforms' events: stacks under `threads`, native frames with packages and
addresses, JVM modules, and messages shown as text, never as raw JSON."""

from __future__ import annotations

from stacklens.issues import payload_view as ev
from tests.stacklens.ingest.grouping.test_v2 import JAVA_LOG, NATIVE_CRASH


def test_thread_stack_is_shown_for_an_event_without_exception() -> None:
    event = {**JAVA_LOG, "logentry": {"message": "invoice %s failed", "params": ["INV-7"]}}
    (entry,) = ev.exceptions(event)
    assert entry["value"] == "invoice INV-7 failed"
    assert [f["function"] for f in entry["frames"]] == ["execute", "run"]
    assert entry["frames"][0]["filename"] == "com.acme.billing.InvoiceJob" and entry["frames"][0]["in_app"]


def test_native_frames_name_their_package_and_address() -> None:
    (entry,) = ev.exceptions(NATIVE_CRASH)
    top = entry["frames"][0]
    assert entry["type"] == "EXCEPTION_ACCESS_VIOLATION_READ"
    assert (top["filename"], top["function"], top["instruction_addr"]) == (
        "render.dll",
        "Renderer::draw",
        "0x1a2b3c",
    )


def test_messages_are_text() -> None:
    assert ev.message_text({"message": {"message": "disk %s full", "params": ["/var"]}}) == "disk /var full"
    assert ev.message_text({"message": {"formatted": "already formatted"}}) == "already formatted"
    assert (
        ev.message_text({"logentry": {"message": "bad %d", "params": ["x"]}}) == "bad %d"
    )  # wrong params: template
    assert ev.message_text({"message": "plain"}) == "plain"
    (entry,) = ev.exceptions({"message": {"message": "disk %s full", "params": ["/var"]}})
    assert entry["value"] == "disk /var full" and "{" not in entry["value"]
