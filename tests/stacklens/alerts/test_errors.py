"""Alerting's errors name the request field (400) or the kind of record that is missing (404)."""

from __future__ import annotations

from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.errors import InvalidInput, NotFound


def test_an_input_error_leads_with_the_field() -> None:
    error = AlertInputError("threshold", "must be a number")
    assert isinstance(error, InvalidInput)
    assert str(error) == "threshold: must be a number"
    assert (error.field, error.message) == ("threshold", "must be a number")


def test_a_missing_rule_or_channel_says_which_kind() -> None:
    error = AlertNotFound("channel", "no channel 42 in this organization")
    assert isinstance(error, NotFound)
    assert error.kind == "channel" and str(error) == "no channel 42 in this organization"
