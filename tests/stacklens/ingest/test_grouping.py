"""Grouping v1 with events made by sentry-sdk itself."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from stacklens.ingest.grouping import issue_id_for
from stacklens.ingest.grouping.v1 import GROUPING_VERSION, fingerprint_event, normalise_message
from tests.stacklens.ingest.sdk_events import capture, capture_message


class PaymentDeclined(Exception):
    pass


def charge(amount: int) -> None:
    raise PaymentDeclined(f"card declined for {amount} cents")


def refund(amount: int) -> None:
    raise PaymentDeclined(f"refund refused for {amount} cents")


def checkout_view() -> None:
    charge(100)


def api_checkout() -> None:
    total = 250
    charge(total)


def middleware(depth: int, then: Any) -> Any:
    if depth == 0:
        return then()
    return middleware(depth - 1, then)


def countdown(n: int) -> None:
    if n == 0:
        charge(5)
    countdown(n - 1)


def lookup(key: str) -> Any:
    return {"a": 1}[key]


def fingerprint(func: Any, **options: Any) -> str:
    return fingerprint_event(capture(func, **options)).hash


def test_different_callers_are_one_issue() -> None:
    assert fingerprint(checkout_view) == fingerprint(api_checkout)


def test_middleware_chains_and_recursion_depths_are_one_issue() -> None:
    shallow = fingerprint(lambda: middleware(1, checkout_view))
    deep = fingerprint(lambda: middleware(25, checkout_view))
    assert shallow == deep == fingerprint(checkout_view)
    assert fingerprint(lambda: countdown(2)) == fingerprint(lambda: countdown(40))


def test_same_type_in_two_functions_is_two_issues() -> None:
    assert fingerprint(lambda: charge(1)) != fingerprint(lambda: refund(1))


def test_line_numbers_never_count() -> None:
    event = capture(checkout_view)
    moved = capture(checkout_view)
    for value in moved["exception"]["values"]:
        for frame in value["stacktrace"]["frames"]:
            frame["lineno"] = (frame.get("lineno") or 0) + 37
    assert fingerprint_event(event).hash == fingerprint_event(moved).hash


def test_crash_site_is_in_app_module_function_and_context_line() -> None:
    grouping = fingerprint_event(capture(lambda: lookup("zz")))
    assert grouping.version == GROUPING_VERSION == "v1"
    assert grouping.components[:2] == ["exception", "KeyError"]
    # The frame's module is this test module's import name (it depends on pytest's import mode).
    assert grouping.components[2] == f'{__name__}:lookup:return {{"a": 1}}[key]'


def test_vendor_frames_are_skipped_for_the_in_app_caller() -> None:
    import json

    def parse_body() -> Any:
        return json.loads("{not json")

    event = capture(parse_body, in_app_exclude=["json"])
    frames = event["exception"]["values"][-1]["stacktrace"]["frames"]
    assert frames[-1]["in_app"] is False
    assert fingerprint_event(event).components[2] == f'{__name__}:parse_body:return json.loads("{{not json")'


def test_sdk_fingerprint_with_default() -> None:
    plain = capture(checkout_view)
    custom = capture(checkout_view)
    custom["fingerprint"] = ["payments", "{{ default }}"]
    only = capture(checkout_view)
    only["fingerprint"] = ["payments"]
    grouped = fingerprint_event(custom)
    assert grouped.components[:2] == ["fingerprint", "payments"]
    assert grouped.components[2:] == fingerprint_event(plain).components
    assert len({fingerprint_event(plain).hash, grouped.hash, fingerprint_event(only).hash}) == 3
    other = capture(lambda: refund(3))
    other["fingerprint"] = ["payments"]
    assert fingerprint_event(other).hash == fingerprint_event(only).hash


def test_exception_without_frames_groups_by_type_and_normalised_value() -> None:
    def strip(event: dict[str, Any]) -> dict[str, Any]:
        for value in event["exception"]["values"]:
            value.pop("stacktrace", None)
        return event

    one = strip(capture(lambda: charge(100)))
    two = strip(capture(lambda: charge(99999)))
    assert fingerprint_event(one).components == [
        "exception-message",
        "PaymentDeclined",
        "card declined for <num> cents",
    ]
    assert fingerprint_event(one).hash == fingerprint_event(two).hash
    assert fingerprint_event(one).hash != fingerprint_event(strip(capture(lambda: refund(1)))).hash


def test_messages_group_with_volatile_parts_replaced() -> None:
    a = capture_message("user alice@example.com failed login from 10.0.0.7 at 2026-11-21T10:00:00Z (try 3)")
    b = capture_message(
        "user bob@corp.example failed login from 192.168.1.20 at 2026-11-22T11:30:00Z (try 12)"
    )
    assert fingerprint_event(a).hash == fingerprint_event(b).hash
    assert fingerprint_event(a).components[0] == "message"
    assert fingerprint_event(capture_message("disk full")).hash != fingerprint_event(a).hash


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("order 1234 of 9f1c2a7e-2b1e-4c1a-9a3e-1d2c3b4a5f60", "order <num> of <uuid>"),
        ("GET https://api.example/v1/users/42?x=1 failed", "GET <url> failed"),
        ("pointer 0xdeadbeef digest a3f9c0de11", "pointer <hex> digest <hex>"),
        ("at 2026-01-02 03:04:05 from ::1 and fe80::1:2:3", "at <date> from <ip> and <ip>"),
    ],
)
def test_normalise_message(text: str, expected: str) -> None:
    assert normalise_message(text) == expected


def test_issue_id_is_the_documented_derivation() -> None:
    fp = fingerprint(checkout_view)
    assert issue_id_for(7, fp) == int(hashlib.sha256(f"7:{fp}".encode()).hexdigest()[:13], 16)
    assert issue_id_for(7, fp) < 2**53 and issue_id_for(7, fp) != issue_id_for(8, fp)


def test_browser_frames_group_across_bundle_hashes() -> None:
    def event(bundle: str, line: int) -> dict[str, Any]:
        return {
            "platform": "javascript",
            "exception": {
                "values": [
                    {
                        "type": "TypeError",
                        "value": "Cannot read properties of undefined (reading 'id')",
                        "stacktrace": {
                            "frames": [
                                {
                                    "filename": "https://cdn.example/vendor.js",
                                    "function": "r",
                                    "lineno": 1,
                                    "in_app": False,
                                },
                                {
                                    "filename": f"https://shop.example/static/{bundle}",
                                    "function": "renderCart",
                                    "lineno": line,
                                    "colno": 9,
                                    "in_app": True,
                                },
                            ]
                        },
                    }
                ]
            },
        }

    a = fingerprint_event(event("app.3f9a1c2b.js", 10))
    assert a.components[2] == "app.js:renderCart:"
    assert a.hash == fingerprint_event(event("app.77aa00ff.js", 480)).hash
