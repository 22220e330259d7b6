"""Grouping v3: v2 over the original frames recorded in the payload, and exactly v2 without them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from stacklens.ingest import grouping
from stacklens.ingest.grouping import v2, v3

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "grouping_v1_cases.json").read_text())[
    "cases"
]


def minified(function: str, column: int) -> dict[str, Any]:
    return {
        "platform": "javascript",
        "exception": {"values": [{"type": "TypeError", "value": "x is undefined", "stacktrace": {"frames": [
            {"abs_path": "https://shop.test/app.min.js", "filename": "/app.min.js", "function": "r",
             "lineno": 1, "colno": 10, "in_app": True},
            {"abs_path": "https://shop.test/app.min.js", "filename": "/app.min.js", "function": function,
             "lineno": 1, "colno": column, "in_app": True, "context_line": "{minified line}"},
        ]}}]},
    }  # fmt: skip


def test_without_original_frames_v3_is_v2() -> None:
    for case in CASES:
        payload = case["payload"]
        assert v3.fingerprint_event(payload).hash == v2.fingerprint_event(payload).hash, case["name"]
        assert grouping.grouper("v3")(payload).version == "v3"
    assert grouping.DEFAULT_VERSION == "v2"  # events without maps keep being grouped by v2


def test_original_frames_group_two_minifications_together() -> None:
    original = {"filename": "src/cart.js", "function": "computeTotal", "in_app": True,
                "context_line": "    throw new TypeError('x is undefined');"}  # fmt: skip
    one, two = minified("n", 70), minified("q", 113)
    assert v2.fingerprint_event(one).hash != v2.fingerprint_event(two).hash
    before = copy.deepcopy(one)
    one[v3.GROUPING_FRAMES] = [None, original]
    two[v3.GROUPING_FRAMES] = [None, original]
    assert v3.fingerprint_event(one).hash == v3.fingerprint_event(two).hash
    assert v3.fingerprint_event(one).components == [
        "exception",
        "TypeError",
        "cart.js:computeTotal:throw new TypeError('x is undefined');",
    ]
    assert one["exception"] == before["exception"]  # the payload itself is left as sent
    assert [f["function"] for f in v3.grouped_frames(one)] == ["r", "computeTotal"]


def test_entries_that_do_not_fit_the_frames_are_ignored() -> None:
    event = minified("n", 70)
    event[v3.GROUPING_FRAMES] = [{"filename": "src/cart.js", "function": "computeTotal", "in_app": True}]
    assert v3.fingerprint_event(event).hash == v2.fingerprint_event(event).hash
    event[v3.GROUPING_FRAMES] = "not a list"
    assert v3.fingerprint_event(event).hash == v2.fingerprint_event(event).hash
