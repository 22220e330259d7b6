"""The demo clock's log records (demo/clock.py): a history request's records carry its moment and release, and
a record is sent only when the service, receiving it up to an hour later, still stores it under that moment
(stacklens.ingest.clock.time_window: more than a day inside the logs' retention)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from demo.clock import (
    LOG_DELIVERY_MARGIN,
    LOG_RETENTION_DAYS,
    REQUEST_CLOCK,
    apply_demo_clock_to_log,
    encode_clock,
)
from stacklens.ingest.clock import time_window


def _sent(at: datetime) -> dict | None:
    token = REQUEST_CLOCK.set(encode_clock(at, "shop@1.0.0"))
    try:
        return apply_demo_clock_to_log({"body": "cart updated"})
    finally:
        REQUEST_CLOCK.reset(token)


@pytest.mark.parametrize("age", [timedelta(days=3), timedelta(days=28, hours=22)])
def test_a_record_inside_the_retention_carries_its_moment_and_release(age: timedelta) -> None:
    at = datetime.now(UTC) - age
    log = _sent(at)
    assert log is not None
    assert log["time_unix_nano"] == int(at.timestamp() * 1_000_000_000)
    assert log["attributes"]["sentry.release"] == "shop@1.0.0"
    # Received an hour later, the service stores it under that moment.
    earliest, latest = time_window(datetime.now(UTC).timestamp() + 3600, LOG_RETENTION_DAYS)
    assert earliest <= at.timestamp() <= latest


@pytest.mark.parametrize(
    "inside", [timedelta(0), timedelta(minutes=30), LOG_DELIVERY_MARGIN - timedelta(seconds=5)]
)
def test_a_record_the_service_would_move_to_its_arrival_is_not_sent(inside: timedelta) -> None:
    """At the service's own edge (29 days back) or less than the delivery margin inside it: received minutes
    later, the record would be stored under its arrival time, on the wrong day."""
    edge = datetime.now(UTC) - timedelta(days=LOG_RETENTION_DAYS - 1)
    assert _sent(edge + inside) is None
    assert _sent(edge - timedelta(days=5)) is None


def test_a_record_outside_a_history_request_is_untouched() -> None:
    log = {"body": "live", "time_unix_nano": 1}
    assert apply_demo_clock_to_log(dict(log)) == log
