"""Numbers written in their unit: rounded as a reader rounds, binary prefixes, a dash for what is missing."""

from __future__ import annotations

import pytest

from stacklens.metrics import units
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


def test_a_size_axis_ticks_at_round_values_of_one_binary_unit() -> None:
    """Issue 71: the release-impact axis read 273 / 545 / 818 KiB (thirds of the range); its ticks sit on
    1, 2 or 5 times a power of ten of one unit for the whole axis, from 0 past the highest value."""
    assert units.round_ticks(818) == [0, 200, 400, 600, 800, 1000]
    assert units.round_ticks(0.3) == [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    assert units.round_ticks(0) == units.round_ticks(float("nan")) == [0]
    assert units.size_ticks(712.9) == (
        [0, 200, 400, 600, 800],
        ["0", "200 KiB", "400 KiB", "600 KiB", "800 KiB"],
    )
    assert units.size_ticks(2100) == (
        [0, 512, 1024, 1536, 2048, 2560],
        ["0", "0.5 MiB", "1 MiB", "1.5 MiB", "2 MiB", "2.5 MiB"],
    )
