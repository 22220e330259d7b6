"""Grouping v1 is frozen: its fingerprints for recorded sentry-sdk events never change.

``grouping_v1_cases.json`` holds real sentry-sdk captures (chained, recursive and vendor-framed exceptions,
SDK fingerprints, a stripped stack, messages, a logging template, an empty event) with the fingerprint v1
gave them when recorded. Issue ids derive from fingerprints, so a change here would split every issue
grouped so far: change grouping in a new version module instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacklens.ingest import grouping
from stacklens.ingest.grouping import v1

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "grouping_v1_cases.json").read_text())[
    "cases"
]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_v1_fingerprints_are_pinned(case: dict[str, Any]) -> None:
    result = v1.fingerprint_event(case["payload"])
    assert (result.version, result.components, result.hash) == ("v1", case["components"], case["hash"])


def test_the_recorded_cases_cover_every_v1_rule() -> None:
    rules = {case["components"][0] for case in CASES}
    assert rules == {"exception", "exception-message", "fingerprint", "message", "empty"}
    assert len({case["hash"] for case in CASES}) == len(CASES)


def test_registry_keeps_v1_beside_the_default_version() -> None:
    assert grouping.DEFAULT_VERSION == "v2"
    assert grouping.GROUPERS["v1"] is v1.fingerprint_event
    payload = CASES[0]["payload"]
    assert grouping.fingerprint_event(payload, version="v1") == v1.fingerprint_event(payload)
    assert grouping.fingerprint_event(payload, version="v1").hash == CASES[0]["hash"]


def test_unknown_version_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown grouping version 'v0' \(known: v1, v2, v3\)"):
        grouping.fingerprint_event(CASES[0]["payload"], version="v0")


def test_the_registry_cannot_be_changed_at_runtime() -> None:
    with pytest.raises(TypeError):
        grouping.GROUPERS["v1"] = v1.fingerprint_event
