"""Explore's table on the page: headers carry the unit and values are written through the metric catalog."""

from __future__ import annotations

from stacklens.explore.columns import AGGREGATE, GROUP, SAMPLES, columns_of
from stacklens.explore.query_parser import parse_query
from stacklens.metrics.formatting import format_value


def test_headers_carry_units_and_values_read_as_the_catalog_writes_them() -> None:
    query = parse_query(
        {
            "dataset": "resources",
            "range": "7d",
            "group_by": ["resource_type", "status_code"],
            "aggregates": [
                {"fn": "count"},
                {"fn": "p95", "metric": "resource_duration_ms"},
                {"fn": "sum", "metric": "resource_bytes"},
                {"fn": "count", "metric": "resource_bytes"},
            ],
        }
    )
    columns = {c.key: c for c in columns_of(query)}
    assert [c.kind for c in columns.values()] == [
        GROUP,
        GROUP,
        AGGREGATE,
        AGGREGATE,
        AGGREGATE,
        AGGREGATE,
        SAMPLES,
    ]
    assert columns["resource_duration_p95_ms"].header == "Resource time p95 (ms)"
    assert columns["resource_size_sum_bytes"].header == "Size sum (bytes)"
    assert columns["count"].header == "Count" and columns["samples"].header == "Samples"
    assert columns["count_resource_bytes"].header == "Size count"
    assert columns["resource_duration_p95_ms"].format(1200.04) == "1,200.0 ms"
    assert columns["resource_size_sum_bytes"].format(250_880) == "245.0 KiB"
    assert columns["count"].format(1234567) == "1,234,567" and columns["samples"].format(12) == "12"
    assert columns["status_code"].format(404.0) == "404" and columns["resource_type"].format("CSS") == "CSS"
    assert columns["resource_duration_p95_ms"].format(None) == "–"


def test_lcp_cls_rates_and_users() -> None:
    query = parse_query(
        {
            "dataset": "errors",
            "range": "7d",
            "aggregates": [{"fn": "rate_per_1k"}, {"fn": "unique_users"}],
        }
    )
    rate, users = columns_of(query)[:2]
    assert rate.header == "Errors (per 1,000)" and rate.format(12.345) == format_value(
        "error_events", 12.345, "rate_per_1k"
    )
    assert users.header == "Unique users" and users.format(10_000) == "10,000"
    pageloads = parse_query(
        {
            "dataset": "pageloads",
            "range": "7d",
            "aggregates": [{"fn": "p75", "metric": "lcp"}, {"fn": "p75", "metric": "cls"}],
        }
    )
    lcp, cls = columns_of(pageloads)[:2]
    assert (lcp.header, lcp.format(2004.85)) == ("LCP p75 (ms)", "2,004.9 ms")
    assert (cls.header, cls.format(0.123)) == ("CLS p75", "0.12")
