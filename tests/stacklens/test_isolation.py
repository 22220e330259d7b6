"""One item's failure is that item's: a line for its page, a later retry; only shared outages fail a step."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.exceptions import OperationalError as WarehouseOperationalError
from sqlalchemy.exc import OperationalError as ControlStoreOperationalError

from stacklens.errors import InvalidInput
from stacklens.isolation import ERROR_CHARS, failure_text, is_shared_outage, retry_at
from stacklens.warehouse.client import WarehouseUnavailable

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_a_domain_error_speaks_for_itself_and_anything_else_is_named_unexpected() -> None:
    assert failure_text(InvalidInput("channel: the webhook URL  answers\n404")) == (
        "channel: the webhook URL answers 404"
    )
    assert (
        failure_text(KeyError("fields"), "a tracker link")
        == "unexpected error (KeyError: 'fields'); retried later"
    )
    assert failure_text(RuntimeError()) == "unexpected error (RuntimeError); retried later"
    assert len(failure_text(InvalidInput("x" * 2000))) == ERROR_CHARS


def test_only_the_stores_not_answering_is_a_shared_outage() -> None:
    assert is_shared_outage(WarehouseUnavailable("the warehouse does not answer"))
    assert is_shared_outage(WarehouseOperationalError("connection refused"))
    assert is_shared_outage(ControlStoreOperationalError("SELECT 1", {}, Exception("gone")))
    assert not is_shared_outage(ValueError("one item's bad value"))


def test_a_failing_item_waits_longer_each_time_up_to_an_hour() -> None:
    first = retry_at(1, NOW) - NOW
    assert timedelta(seconds=15) <= first <= timedelta(seconds=30)
    assert timedelta(seconds=15) <= retry_at(0, NOW) - NOW <= timedelta(seconds=30)
    assert timedelta(minutes=30) <= retry_at(20, NOW) - NOW <= timedelta(hours=1)
