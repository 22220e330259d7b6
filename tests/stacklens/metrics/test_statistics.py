"""The statistics a metric is summarised by, and the error each states."""

from __future__ import annotations

from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR, STATISTICS


def test_percentiles_state_the_histogram_error_and_the_rest_are_exact() -> None:
    assert [key for key, s in STATISTICS.items() if s.quantile is not None] == [
        "p50",
        "p75",
        "p90",
        "p95",
        "p99",
    ]
    assert STATISTICS["p75"].quantile == 0.75 and STATISTICS["p75"].label == "75th percentile"
    assert STATISTICS["p95"].error == QUANTILE_RELATIVE_ERROR
    for key in ("avg", "sum", "min", "max", "count", "rate_per_1k"):
        assert STATISTICS[key].exact and STATISTICS[key].error == 0.0 and STATISTICS[key].quantile is None
    assert all(key == s.key for key, s in STATISTICS.items())
