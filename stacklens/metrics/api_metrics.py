"""The catalog's metrics of API calls (`api_call_periods` …) and the backend's transactions;
:mod:`stacklens.metrics.catalog` holds them all, in order."""

from __future__ import annotations

from stacklens.metrics.definition import (
    LOG_HISTOGRAM,
    RAW_ROWS,
    SUM_COUNT,
    TIMING_STATISTICS,
    USED_BY_ALL,
    USED_BY_RULES,
    USED_BY_VIEWS,
    Metric,
    State,
)
from stacklens.metrics.units import COUNT, MS, PERCENT

# The one definition of an error rate of API calls (error_pct, and api_error_pct on the browser's side).
_API_ERRORS = (
    "Share of API calls answered with an HTTP 4xx or 5xx status, over all calls of the scope (calls without a "
    "status count in the denominator only)."
)


API_METRICS: tuple[Metric, ...] = (
    Metric(
        "api_ms",
        "API response time",
        "API",
        MS,
        TIMING_STATISTICS,
        "p75",
        "Duration of server transactions (op http.server); the endpoints view adds the browser's API calls.",
        "api",
        (State("endpoint_call_periods", ("calls", "duration_sum", "dur_hist"), LOG_HISTOGRAM, USED_BY_ALL),),
        aliases=("api",),
        budget=True,
        kind="api_calls",
    ),
    Metric(
        "api_p95_ms",
        "API response time p95",
        "API p95",
        MS,
        ("p95",),
        "p95",
        "The 95th percentile of the API response time (the same as api_ms with the statistic p95).",
        "api",
        (State("endpoint_call_periods", ("calls", "dur_hist"), LOG_HISTOGRAM, USED_BY_RULES),),
        fixed_statistic=True,
        budget=True,
        same_as=("api_ms", "p95"),
        kind="api_calls",
    ),
    Metric(
        "api_calls",
        "API calls",
        "API calls",
        COUNT,
        ("count", "avg"),
        "count",
        "Calls to an endpoint (count), or browser API calls per page load (avg).",
        "api_calls",
        (
            State("endpoint_call_periods", ("calls",), SUM_COUNT, USED_BY_VIEWS),
            State("pageload_periods", ("api_calls", "views"), SUM_COUNT, USED_BY_VIEWS),
        ),
        decimals=0,
        kind="api_calls",
    ),
    Metric(
        "error_pct",
        "Error rate",
        "Error rate",
        PERCENT,
        ("avg",),
        "avg",
        _API_ERRORS + " Budgets and alert rules read the server side's calls (http.server transactions, the "
        "scope matching their route), as the endpoints view's server rows.",
        "error",
        (State("endpoint_call_periods", ("calls", "s4xx", "s5xx"), SUM_COUNT, USED_BY_ALL),),
        fixed_statistic=True,
        budget=True,
        kind="api_calls",
    ),
    Metric(
        "api_error_pct",
        "API error rate (browser calls)",
        "API errors",
        PERCENT,
        ("avg",),
        "avg",
        _API_ERRORS
        + " Over the browser's API calls (http.client spans) of a release's page loads: error_pct "
        "of the client side.",
        "api_error",
        (State("pageload_periods", ("api_calls", "api_errors"), SUM_COUNT, "releases view"),),
        fixed_statistic=True,
        kind="api_calls",
    ),
    Metric(
        "failed_transactions_pct",
        "Failed transactions",
        "Failed transactions",
        PERCENT,
        ("avg",),
        "avg",
        "Transactions whose status is not ok, cancelled or unknown, or whose HTTP status is 500 or more, over all "
        "transactions (Sentry's failure rate): what an alert rule of type error_rate watches.",
        "failed_transactions",
        (State("transactions", ("status", "http_status"), RAW_ROWS, "alert rules of type error_rate"),),
        fixed_statistic=True,
        kind="transactions",
    ),
)
