"""An event's exceptions (stacklens/issues/payload_exceptions.py) for other platforms: stacks under
`threads`, native frames with packages and addresses."""

from __future__ import annotations

from stacklens.issues import payload_exceptions
from tests.stacklens.ingest.grouping.test_v2 import JAVA_LOG, NATIVE_CRASH


def test_thread_stack_is_shown_for_an_event_without_exception() -> None:
    event = {**JAVA_LOG, "logentry": {"message": "invoice %s failed", "params": ["INV-7"]}}
    (entry,) = payload_exceptions.exceptions(event)
    assert entry["value"] == "invoice INV-7 failed"
    assert [f["function"] for f in entry["frames"]] == ["execute", "run"]
    assert entry["frames"][0]["filename"] == "com.acme.billing.InvoiceJob" and entry["frames"][0]["in_app"]


def test_native_frames_name_their_package_and_address() -> None:
    (entry,) = payload_exceptions.exceptions(NATIVE_CRASH)
    top = entry["frames"][0]
    assert entry["type"] == "EXCEPTION_ACCESS_VIOLATION_READ"
    assert (top["filename"], top["function"], top["instruction_addr"]) == (
        "render.dll",
        "Renderer::draw",
        "0x1a2b3c",
    )
