"""Grouping v2: the same issues as v1 for every event v1 grouped by exception or message (no issue splits
when ingest moves to v2), and groupings and titles of their own for the events of other platforms that v1
put into one untitled issue: stacks under `threads` or a top-level `stacktrace`, security reports, minimal
events. Payloads are shaped as the platforms' SDKs send them (Sentry protocol documentation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacklens.ingest.grouping import v2
from stacklens.ingest.normalise import Origin, event_row

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "grouping_v1_cases.json").read_text())[
    "cases"
]

JAVA_LOG: dict[
    str, Any
] = {  # sentry-java's logback appender: an error log with the thread's stack, no exception
    "platform": "java",
    "level": "error",
    "logger": "com.acme.billing.InvoiceJob",
    "threads": {
        "values": [
            {
                "id": 17,
                "name": "scheduler-1",
                "current": True,
                "crashed": False,
                "stacktrace": {
                    "frames": [
                        {"module": "java.lang.Thread", "function": "run", "in_app": False},
                        {
                            "module": "com.acme.billing.InvoiceJob",
                            "function": "execute",
                            "lineno": 88,
                            "in_app": True,
                        },
                    ]
                },
            }
        ]
    },
}
NATIVE_CRASH: dict[str, Any] = {  # sentry-native minidump, symbolicated: frames with packages and addresses
    "platform": "native",
    "level": "fatal",
    "exception": {
        "values": [
            {"type": "EXCEPTION_ACCESS_VIOLATION_READ", "thread_id": 3, "mechanism": {"type": "minidump"}}
        ]
    },
    "threads": {
        "values": [
            {
                "id": 1,
                "stacktrace": {
                    "frames": [
                        {
                            "function": "main",
                            "package": "C:\\\\app\\\\game.exe",
                            "instruction_addr": "0x401000",
                        }
                    ]
                },
            },
            {
                "id": 3,
                "crashed": True,
                "stacktrace": {
                    "frames": [
                        {
                            "function": "RtlUserThreadStart",
                            "package": "C:\\\\Windows\\\\System32\\\\ntdll.dll",
                            "instruction_addr": "0x7ff8a1",
                        },
                        {
                            "function": "Renderer::draw",
                            "package": "C:\\\\app\\\\render.dll",
                            "instruction_addr": "0x1a2b3c",
                            "in_app": True,
                        },
                    ]
                },
            },
        ]
    },
}
CSP: dict[str, Any] = {
    "platform": "javascript",
    "logger": "csp",
    "csp": {
        "document_uri": "https://shop.example/cart",
        "effective_directive": "script-src-elem",
        "violated_directive": "script-src-elem",
        "blocked_uri": "https://evil.example/x.js?v=3",
    },
}
HPKP: dict[str, Any] = {"platform": "other", "hpkp": {"hostname": "shop.example", "port": 443}}


def _with(payload: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return json.loads(json.dumps({**payload, **changes}))


# v1 grouped empty events across platforms; v2 splits them on purpose (the one intended change).
KEPT = [case for case in CASES if case["components"][0] != "empty"]


@pytest.mark.parametrize("case", KEPT, ids=[case["name"] for case in KEPT])
def test_v2_keeps_v1_issues_for_exceptions_and_messages(case: dict[str, Any]) -> None:
    assert v2.fingerprint_event(case["payload"]).hash == case["hash"]


def test_stack_under_threads_groups_by_its_crash_site() -> None:
    first = v2.fingerprint_event(JAVA_LOG)
    moved = v2.fingerprint_event(
        _with(JAVA_LOG, threads={"values": [{**JAVA_LOG["threads"]["values"][0], "id": 99}]})
    )
    assert first.components == ["stacktrace", "com.acme.billing.InvoiceJob:execute:"]
    assert first.hash == moved.hash, "another thread id is the same problem"
    other = _with(JAVA_LOG)
    other["threads"]["values"][0]["stacktrace"]["frames"][1]["function"] = "retry"
    assert v2.fingerprint_event(other).hash != first.hash


def test_native_crash_uses_the_crashed_thread_and_never_addresses() -> None:
    first = v2.fingerprint_event(NATIVE_CRASH)
    assert first.components == ["exception", "EXCEPTION_ACCESS_VIOLATION_READ", "render.dll:Renderer::draw:"]
    relocated = _with(NATIVE_CRASH)
    relocated["threads"]["values"][1]["stacktrace"]["frames"][1]["instruction_addr"] = "0x99aa00"
    assert v2.fingerprint_event(relocated).hash == first.hash


def test_security_reports_and_minimal_events_group_apart() -> None:
    csp = v2.fingerprint_event(CSP)
    assert csp.components == ["security", "csp", "script-src-elem", "evil.example"]
    other_file = v2.fingerprint_event(
        _with(CSP, csp={**CSP["csp"], "blocked_uri": "https://evil.example/y.js"})
    )
    assert other_file.hash == csp.hash, "one blocked host, one issue"
    assert v2.fingerprint_event(HPKP).components == ["security", "hpkp", "", "shop.example"]
    minimal = {v2.fingerprint_event({"platform": p}).hash for p in ("python", "javascript", "go")}
    assert len(minimal) == 3, "minimal events of different platforms are different issues"


@pytest.mark.parametrize(
    ("payload", "title"),
    [
        (JAVA_LOG, "Stack trace: execute in com.acme.billing.InvoiceJob"),
        (NATIVE_CRASH, "EXCEPTION_ACCESS_VIOLATION_READ"),
        (CSP, "Blocked 'script-src-elem' from 'evil.example'"),
        (HPKP, "HPKP violation for shop.example"),
        ({"platform": "go", "level": "warning"}, "go warning event"),
        (
            {
                "logentry": {
                    "message": "payment %s declined",
                    "params": ["p-1"],
                    "formatted": "payment p-1 declined",
                }
            },
            "payment p-1 declined",
        ),
    ],
)
def test_every_event_gets_a_title(payload: dict[str, Any], title: str) -> None:
    row = event_row(
        payload, Origin(org_id=1, project_id=1, service=None, batch_id="b", received_at=1.8e9), b"{}", "{}"
    )
    assert row["title"] == title
    assert row["grouping_version"] == "v2"


def test_the_row_culprit_comes_from_a_thread_stack() -> None:
    row = event_row(
        JAVA_LOG, Origin(org_id=1, project_id=1, service=None, batch_id="b", received_at=1.8e9), b"{}", "{}"
    )
    assert row["culprit"] == "execute in com.acme.billing.InvoiceJob"
    assert row["in_app_frames"][0] == "com.acme.billing.InvoiceJob:execute"
