"""Sentry timestamps to epoch seconds (implausible ones refused) and back to the warehouse's text."""

from __future__ import annotations

import pytest

from stacklens.ingest.timeparse import format_ms, to_epoch

AT = 1_763_640_000.25  # 2025-11-20T12:00:00.250Z


@pytest.mark.parametrize(
    "value",
    [AT, str(AT), "2025-11-20T12:00:00.250Z", "2025-11-20T13:00:00.250+01:00", "2025-11-20T12:00:00.250"],
)
def test_numbers_and_rfc3339_text_are_read_as_utc(value: object) -> None:
    assert to_epoch(value) == pytest.approx(AT)


@pytest.mark.parametrize(
    "value", [None, True, "", "yesterday", "2025-13-40T00:00:00Z", AT * 1000, 12.0, float("nan"), [AT]]
)
def test_missing_malformed_and_implausible_times_are_none(value: object) -> None:
    assert to_epoch(value) is None


def test_warehouse_text_to_the_millisecond() -> None:
    assert format_ms(AT) == "2025-11-20 12:00:00.250"
    # A fraction that rounds up to a whole second carries into the seconds (and the minute).
    assert format_ms(1_763_640_059.9996) == "2025-11-20 12:01:00.000"
