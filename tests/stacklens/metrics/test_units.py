"""Numbers written in their unit: rounded as a reader rounds, binary prefixes, a dash for what is missing."""

from __future__ import annotations

import pytest

from stacklens.metrics.units import (
    BYTES,
    COUNT,
    MISSING,
    MS,
    PERCENT,
    SCORE,
    UNITS,
    axis_tick,
    binary_size,
    format_in,
    number,
    plain_number,
)


def test_half_up_from_the_shortest_decimal_form() -> None:
    assert number(2004.85, 1) == "2,004.9"  # the float is 2004.8499…; a reader rounds 2004.85 up
    assert number(-0.04, 1) == "0.0"  # never "-0.0"
    assert number(1234567, 0) == "1,234,567"


def test_plain_numbers_go_back_into_a_form() -> None:
    assert [plain_number(v) for v in (1_000_000, 0.1, 2500.50, -0.0)] == ["1000000", "0.1", "2500.5", "0"]


def test_binary_sizes_pick_the_prefix_after_rounding() -> None:
    assert binary_size(512) == "512 B"
    assert binary_size(256_000) == "250.0 KiB"
    assert binary_size(1_048_575) == "1.0 MiB"
    assert binary_size(5 * 1024**4) == "5,120.0 GiB"


@pytest.mark.parametrize(
    ("unit", "value", "written"),
    [
        (MS, 2004.9, "2,004.9 ms"),
        (BYTES, 1536, "1.5 KiB"),
        (PERCENT, 3.44, "3.4 %"),
        (SCORE, 0.125, "0.13"),
        (COUNT, 1234, "1,234"),
        (MS, None, MISSING),
        (MS, float("inf"), MISSING),
        (COUNT, True, MISSING),
    ],
)
def test_values_in_their_unit(unit, value, written: str) -> None:
    assert format_in(unit, value) == written


def test_axis_ticks_are_short() -> None:
    assert [axis_tick(MS, v) for v in (100, 1000, 2500)] == ["100 ms", "1 s", "2.5 s"]
    assert axis_tick(BYTES, 1536) == "1.5 KiB" and axis_tick(COUNT, 20) == "20"
    assert set(UNITS) >= {"ms", "bytes", "score", "percent", "ratio", "count"}
