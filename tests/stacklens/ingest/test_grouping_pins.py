"""In-app inference is for display: every grouping version gives the fingerprints it gave before inference
existed, for every event of the corpora (``grouping_pins.json``, recorded before), as sent and with every
``in_app`` flag removed (what sentry-python usually sends), whatever in-app rules the project has — and
ingest leaves the payload as the SDK sent it, so grouping it again later gives the same issue."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stacklens.ingest import grouping
from stacklens.ingest.fields import Origin
from stacklens.ingest.grouping import SOURCEMAPPED_VERSION
from stacklens.ingest.in_app import InAppRules
from stacklens.ingest.normalise import event_row

HERE = Path(__file__).parent
PINS: dict[str, dict[str, str]] = json.loads((HERE / "grouping_pins.json").read_text())["fingerprints"]
CORPUS = json.loads((HERE.parents[1] / "api" / "sentry_corpus.json").read_text())["events"]
CASES = {
    c["name"]: c["payload"]
    for c in json.loads((HERE / "grouping" / "grouping_v1_cases.json").read_text())["cases"]
}
ORIGIN = Origin(org_id=1, project_id=1, service=None, batch_id="b", received_at=1.8e9)


def _without_in_app(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_in_app(v) for k, v in value.items() if k != "in_app"}
    if isinstance(value, list):
        return [_without_in_app(v) for v in value]
    return value


def _modules(value: Any) -> set[str]:
    """Every frame module of a payload: rules naming them all flip every frame the SDK marked."""
    if isinstance(value, dict):
        found = {value["module"]} if isinstance(value.get("module"), str) and "function" in value else set()
        return found.union(*(_modules(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_modules(v) for v in value))
    return set()


def _events() -> list[tuple[str, dict[str, Any]]]:
    events = [(f"sentry_corpus/{name}", payload) for name, payload in CORPUS.items()]
    events += [(f"grouping_v1_cases/{name}", payload) for name, payload in CASES.items()]
    return [
        (f"{name}/{variant}", shaped)
        for name, payload in events
        for variant, shaped in (("as_sent", payload), ("in_app_unset", _without_in_app(payload)))
    ]


EVENTS = _events()


def test_the_pins_cover_every_event_of_both_corpora() -> None:
    assert sorted(PINS) == sorted(name for name, _ in EVENTS)
    assert len(EVENTS) == 2 * (len(CORPUS) + len(CASES)) == 54


@pytest.mark.parametrize(("name", "payload"), EVENTS, ids=[name for name, _ in EVENTS])
def test_fingerprints_are_the_ones_recorded_before_inference(name: str, payload: dict[str, Any]) -> None:
    pinned = PINS[name]
    for version in ("v1", "v2", "v3"):
        assert grouping.fingerprint_event(copy.deepcopy(payload), version).hash == pinned[version], version
    modules = tuple(sorted(_modules(payload)))
    for rules in (InAppRules(), InAppRules(include=modules), InAppRules(exclude=modules)):
        sent = copy.deepcopy(payload)
        row = event_row(sent, ORIGIN, b"{}", "{}", in_app_rules=rules)
        assert row["fingerprint"] == pinned["v2"] and row["grouping_version"] == "v2"
        mapped = event_row(sent, ORIGIN, b"{}", "{}", SOURCEMAPPED_VERSION, rules)
        assert mapped["fingerprint"] == pinned["v3"]
        assert sent == payload, "ingest must leave the payload (what is stored and grouped again) as sent"


def test_inference_changes_what_is_shown_for_events_without_flags() -> None:
    """The check above is not vacuous: inference does change the culprit of unflagged events."""
    java = _without_in_app(CORPUS["java"])
    row = event_row(java, ORIGIN, b"{}", "{}")
    assert row["culprit"].endswith("in com.acme.shop.CheckoutService")
    assert not any(label.startswith("java.") for label in row["in_app_frames"])
