"""Reading feedback from the widget's item, a user report and the dialog's form: the fields kept, ids made
canonical, refusals with their reason, and the service's scrubbing applied."""

from __future__ import annotations

import pytest

from stacklens.feedback.items import (
    MESSAGE_TOO_LARGE,
    NO_MESSAGE,
    FeedbackRefused,
    dialog_report,
    feedback_item,
    hex_id,
    user_report,
    with_rules,
)
from stacklens.scrubbing.apply import NO_RULES, ScrubRules
from stacklens.scrubbing.rules import RuleSpec, check_rules

EVENT = "0123456789abcdef0123456789abcdef"


def test_the_widget_item() -> None:
    payload = {
        "event_id": "f" * 32,
        "release": "shop@2.0",
        "environment": "prod",
        "user": {"email": "from-user@example.test"},
        "contexts": {
            "feedback": {
                "message": " It broke ",
                "name": "Ada",
                "url": "https://s/x",
                "associated_event_id": EVENT,
            },
            "replay": {"replay_id": "A" * 32},
        },
    }
    got = feedback_item(payload)
    assert (got.feedback_id, got.source, got.event_id, got.replay_id) == (
        "f" * 32,
        "feedback",
        EVENT,
        "a" * 32,
    )
    assert (got.name, got.email, got.message, got.url) == (
        "Ada",
        "from-user@example.test",
        "It broke",
        "https://s/x",
    )
    assert (got.release, got.environment) == ("shop@2.0", "prod")
    assert feedback_item({"contexts": {"feedback": {"message": "x"}}}, "e" * 32).feedback_id == "e" * 32


def test_a_user_report_and_the_dialog() -> None:
    report = user_report({"event_id": "01234567-89ab-cdef-0123-456789abcdef", "name": "G", "comments": "Hi"})
    assert (report.feedback_id, report.event_id, report.source, report.message) == (
        EVENT,
        EVENT,
        "user_report",
        "Hi",
    )
    dialog = dialog_report(EVENT, "Linus", "l@example.test", "Crashed", "https://s/")
    assert (dialog.source, dialog.event_id, dialog.email) == ("dialog", EVENT, "l@example.test")
    assert hex_id("not an id") == "" and hex_id(None) == ""


@pytest.mark.parametrize(
    ("read", "status", "reason"),
    [
        (lambda: feedback_item({"contexts": {"feedback": {"message": "   "}}}), 400, NO_MESSAGE),
        (lambda: feedback_item({"contexts": {}}), 400, NO_MESSAGE),
        (lambda: feedback_item(["not", "an", "object"]), 400, NO_MESSAGE),
        (lambda: user_report({"event_id": EVENT}), 400, NO_MESSAGE),
        (lambda: dialog_report(EVENT, "a", "b", "x" * 4097), 413, MESSAGE_TOO_LARGE),
    ],
)
def test_refused_with_the_reason(read, status: int, reason: str) -> None:
    with pytest.raises(FeedbackRefused) as refused:
        read()
    assert (refused.value.status, refused.value.reason) == (status, reason)
    assert dialog_report(EVENT, "a", "b", "x" * 4096).message == "x" * 4096  # the limit itself is kept


def test_secrets_and_cards_are_scrubbed_as_in_events() -> None:
    got = dialog_report(EVENT, "Ada", "ada@example.test", "my card 4111 1111 1111 1111 was charged twice")
    assert "4111 1111 1111 1111" not in got.message and got.email == "ada@example.test"


def test_the_project_scrubbing_rules_reach_feedback() -> None:
    rules = ScrubRules(
        tuple(
            check_rules(
                [
                    RuleSpec("hash", "email", None, "user.email"),
                    RuleSpec("mask", "email", None, "contexts.**"),
                ]
            )
        ),
        b"salt",
    )
    report = dialog_report("a" * 32, "Ann", "ann@example.com", "write to ann@example.com please")
    ruled = with_rules(report, rules)
    assert len(ruled.email) == 16 and "@" not in ruled.email
    assert ruled.message == "write to " + "*" * 15 + " please" and ruled.name == "Ann"
    assert with_rules(report, NO_RULES) is report
