"""How metric values, columns and axes are written: binary byte prefixes (never "KB"), fixed notation (never
``7.3e+05``), units, one decimal for ms rounded as a reader rounds, ``–`` for a missing value."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.formatting import axis_title, column_name, format_value, unit_text
from stacklens.metrics.units import BYTES, MISSING, binary_size, format_in, plain_number


@pytest.mark.parametrize(
    ("metric", "value", "written"),
    [
        ("lcp_ms", 2004.9, "2,004.9 ms"),
        ("lcp_ms", 2004.85, "2,004.9 ms"),  # half up from the decimal form, not the float's 2004.8499…
        ("load_time_ms", 1234567.25, "1,234,567.3 ms"),
        ("lcp", 2500, "2,500.0 ms"),  # an alias writes as its metric
        ("ttfb_ms", -0.04, "0.0 ms"),  # never "-0.0"
        ("js_bytes", 256_000, "250.0 KiB"),
        ("js_bytes", 730_000, "712.9 KiB"),
        ("transfer_bytes", 512, "512 B"),
        ("transfer_bytes", 1023.6, "1.0 KiB"),  # the prefix is chosen after rounding
        ("transfer_bytes", 1_048_575, "1.0 MiB"),
        ("transfer_bytes", 3 * 1024**3, "3.0 GiB"),
        ("cls", 0.123, "0.12"),
        ("cls", 0.125, "0.13"),
        ("error_pct", 3.42, "3.4 %"),
        ("page_loads", 1234, "1,234"),
        ("score", 87.4, "87"),
        ("compression_ratio", 2.5, "2.50"),
        ("error_events", 12.34, "12"),
        ("lcp_ms", None, MISSING),
        ("lcp_ms", math.nan, MISSING),
        ("js_bytes", math.inf, MISSING),
    ],
)
def test_values_are_written_in_their_unit(metric: str, value: float | None, written: str) -> None:
    assert format_value(metric, value) == written


def test_a_statistic_that_counts_is_written_as_a_count() -> None:
    assert format_value("lcp_ms", 1234, "count") == "1,234"
    assert format_value("error_events", 12.345, "rate_per_1k") == "12.3 per 1,000"
    assert format_value("lcp_ms", 2004.9, "p75") == "2,004.9 ms"
    assert (
        unit_text("lcp_ms", "count") == ""
        and unit_text("js_bytes") == "bytes"
        and unit_text("error_pct") == "%"
    )


@given(
    st.sampled_from(sorted(CATALOG)),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30),
)
def test_no_value_is_written_in_scientific_notation_or_in_kb(metric: str, value: float) -> None:
    text = format_value(metric, value)
    assert "e+" not in text and "e-" not in text and "E" not in text.replace("GiB", ""), text
    assert " KB" not in text and " MB" not in text, text
    assert text == format_value(metric, value)  # the same value, the same string


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e15))
def test_binary_sizes_stay_below_1024_of_their_prefix(value: float) -> None:
    number, _, prefix = binary_size(value).partition(" ")
    assert prefix in ("B", "KiB", "MiB", "GiB")
    assert float(number.replace(",", "")) < 1024 or prefix == "GiB"
    assert format_in(BYTES, value) == binary_size(value)


def test_plain_numbers_go_back_into_forms_and_commands() -> None:
    assert [plain_number(v) for v in (1e6, 300_000, 0.1, 2500.5, -0.0, 1.5e-7)] == [
        "1000000",
        "300000",
        "0.1",
        "2500.5",
        "0",
        "0.00000015",
    ]


def test_columns_and_axes_carry_the_unit() -> None:
    assert column_name("lcp_ms") == "lcp_p75_ms" and column_name("lcp_ms", "p75") == "lcp_p75_ms"
    assert column_name("load_time_ms", "avg") == "load_avg_ms"
    assert column_name("cls") == "cls_p75"
    assert column_name("js_bytes") == "js_per_view_bytes"
    assert column_name("error_pct") == "error_pct"
    assert column_name("api_p95_ms") == column_name("api_ms", "p95") == "api_p95_ms"
    assert column_name("page_loads") == "views"
    assert column_name("error_events", "rate_per_1k") == "error_events_per_1k"
    assert axis_title("lcp_ms") == "LCP p75 (ms)"
    assert axis_title("js_bytes") == "JavaScript (bytes)"
    assert axis_title("cls") == "CLS p75"
    assert axis_title("error_pct") == "Error rate (%)"
    for key, metric in CATALOG.items():
        for statistic in metric.statistics:
            name = column_name(key, statistic)
            assert name.isidentifier() and name == name.lower(), name
            suffix = metric.unit.column_suffix
            if suffix and statistic not in ("count", "rate_per_1k"):
                assert name.endswith("_" + suffix) or name == suffix, name
