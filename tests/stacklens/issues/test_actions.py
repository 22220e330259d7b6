"""Status changes through the workflow: each page action's status, the ignore form's choices, and refusals
in plain words (an unknown issue, an illegal transition)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stacklens.issues.actions import ACTIONS, StatusRequest, apply_status, parse_ignore
from stacklens.issues.reads import issue_summary, status_history
from stacklens.issues.workflow import IllegalTransition
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise ValueError("bad coupon")


def test_apply_status_changes_records_and_refuses(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    (row,) = land(1, 1, [sdk_event(_fail)])
    issue_id = int(row["issue_id"])

    assert apply_status(client, 1, 1, issue_id, StatusRequest(ACTIONS["resolve"]), "ann@example.test") is None
    assert issue_summary(client, 1, 1, issue_id)["status"] == "resolved"
    history = status_history(client, 1, 1, issue_id)
    assert history and history[-1]["actor"] == "ann@example.test"

    # Another organization or project cannot touch it, and says so without revealing it exists.
    refused = apply_status(client, 2, 1, issue_id, StatusRequest("ignored"), "api:7")
    assert refused == "no such issue in this project"
    assert issue_summary(client, 1, 1, issue_id)["status"] == "resolved"
    # An impossible status is refused by the workflow, in words.
    assert apply_status(client, 1, 1, issue_id, StatusRequest("exploded"), "api:7")


def test_the_ignore_form() -> None:
    assert parse_ignore("forever", "", "") == (None, None)
    assert parse_ignore("events", " 25 ", "") == (25, None)
    assert parse_ignore("until", "", "2026-12-24") == (None, datetime(2026, 12, 24, tzinfo=UTC))
    for kind, events, until, message in [
        ("events", "0", "", "whole number"),
        ("events", "many", "", "whole number"),
        ("until", "", "next week", "YYYY-MM-DD"),
    ]:
        with pytest.raises(IllegalTransition, match=message):
            parse_ignore(kind, events, until)
