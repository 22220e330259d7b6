"""Performance domain: page metrics, resource breakdown and API endpoint metrics, per UTC day."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from pipelines.assets.common import RAW_SPANS, RAW_TRANSACTIONS, MartCheck, rebuild_from_states
from pipelines.partitions import daily_partitions
from pipelines.resources import ClickHouseResource
from stacklens.performance.score import sql_parameters

_PARTITIONED: dict[str, Any] = {
    "partitions_def": daily_partitions,
    "backfill_policy": dg.BackfillPolicy.single_run(),
    "kinds": {"clickhouse"},
    "group_name": "performance",
}


PAGE_CHECKS = [
    MartCheck(
        "page_metrics_percentiles_ordered",
        "Percentiles are ordered (p50 <= p75 <= p95) and views positive.",
        "SELECT count() FROM page_metrics FINAL WHERE views = 0 OR load_p50_ms > load_p75_ms"
        " OR load_p75_ms > load_p95_ms OR ttfb_p50_ms > ttfb_p75_ms OR ttfb_p75_ms > ttfb_p95_ms",
    )
]
RESOURCE_CHECKS = [
    MartCheck(
        "resource_impacts_valid",
        "Impacts are set exactly on render-blocking resources.",
        "SELECT count() FROM resource_details FINAL"
        " WHERE (render_blocking = 1) != (impact IN ('High', 'Medium', 'Low'))",
    )
]
API_CHECKS = [
    MartCheck(
        "api_counts_add_up",
        "Outcome counts never exceed the calls.",
        "SELECT count() FROM api_endpoint_metrics FINAL WHERE success + client_errors + server_errors > calls",
    )
]


@dg.asset(
    deps=[RAW_TRANSACTIONS, RAW_SPANS],
    check_specs=[c.spec("page_metrics") for c in PAGE_CHECKS],
    **_PARTITIONED,
)
def page_metrics(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project, page (normalised route) and UTC day: views; avg/p50/p75/p95 of load time, TTFB,
    DOM ready, total resource load time and API call response time; LCP, CLS and INP p75.

    Percentiles are exact (linear interpolation). Daily partitions; a tick refreshes the hourly states
    (`page_hour_states`, also read by weekly_trends and release_impact) of the hours with new data, then
    rebuilds their days from the states. Table `page_metrics`.

    The same hours refresh `pageload_facts`: one row per page load with its vitals, phases, API calls,
    JavaScript bytes and score, then from them the minute, hour, day and block-of-days states `pageload_periods`
    (per filter dimensions and page: counts, sums, 1 % log histograms and the 3 fastest and slowest page
    loads) and the per-bucket example page loads `pageload_examples` (the page detail's median
    samples) — what the page-load views read (docs/performance.md).
    """
    return rebuild_from_states(
        context,
        warehouse.get_client(),
        "page_metrics",
        ["transactions", "spans"],
        [
            "page_hour_states",
            "pageload_facts",
            "pageload_hours",
            "pageload_minutes",
            "pageload_days",
            "pageload_spans",
            "pageload_examples",
            "pageload_example_days",
        ],
        [("page_metrics", "page_metrics", "row_count")],
        PAGE_CHECKS,
        sql_parameters(),
    )


@dg.asset(
    deps=[RAW_SPANS], check_specs=[c.spec("resource_breakdown") for c in RESOURCE_CHECKS], **_PARTITIONED
)
def resource_breakdown(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """Per project, page, UTC day and resource type (JavaScript, CSS, Images, Fonts, API, Other): requests, size,
    load time (table `resource_breakdown`); and per resource URL (table `resource_details`): size, load time,
    whether it is render-blocking and its impact — the largest resources are the top of that table by size.

    Render-blocking impact rule: High when the resource takes >= 500 ms on average or weighs >= 100 KB;
    Medium when >= 200 ms or >= 30 KB; otherwise Low.

    Hourly states `resource_hour_states` and `resource_detail_hour_states` (refreshed for the hours with new
    spans) feed the days. Percentiles exact. The same hours refresh `resource_facts` (one row per resource
    span and browser API call, with its type, host and its page load's browser and FCP), then from them the
    per-minute, per-hour and per-day states in `resource_request_periods` (per filter dimensions and resource,
    load time as a 1 % log histogram; also blocks of 2–16 days merged from the days) — what the resources view
    and the recommendations read.
    """
    return rebuild_from_states(
        context,
        warehouse.get_client(),
        "resource_breakdown",
        ["spans", "transactions"],
        [
            "resource_hour_states",
            "resource_detail_hour_states",
            "resource_facts",
            "resource_request_hours",
            "resource_request_minutes",
            "resource_request_days",
            "resource_request_spans",
        ],
        [
            ("resource_breakdown", "resource_breakdown", "row_count"),
            ("resource_details", "resource_details", "resource_rows"),
        ],
        RESOURCE_CHECKS,
    )


@dg.asset(
    deps=[RAW_TRANSACTIONS, RAW_SPANS],
    check_specs=[c.spec("api_endpoint_metrics") for c in API_CHECKS],
    **_PARTITIONED,
)
def api_endpoint_metrics(
    context: AssetExecutionContext, warehouse: ClickHouseResource
) -> dg.MaterializeResult:
    """One row per project, source (server transactions / client spans), method, normalised path (ids, UUIDs
    and digests folded) and UTC day: calls, average, p50, p95, successes (2xx/3xx), 4xx, 5xx and error
    percentage = 100 * (4xx + 5xx) / calls. Hourly states `endpoint_hour_states` (also read by release_impact)
    are refreshed for the hours with new data, then the days rebuilt from them. Percentiles exact. Table
    `api_endpoint_metrics`. The same hours refresh `endpoint_facts` (one row per API call with its
    parameterised path and the calling page load's browser), then from them the per-minute, per-hour and per-day states
    in `endpoint_call_periods` (with blocks of 2–16 days) — what the endpoints view reads.
    """
    return rebuild_from_states(
        context,
        warehouse.get_client(),
        "api_endpoint_metrics",
        ["transactions", "spans"],
        [
            "endpoint_hour_states",
            "endpoint_facts",
            "endpoint_call_hours",
            "endpoint_call_minutes",
            "endpoint_call_days",
            "endpoint_call_spans",
        ],
        [("api_endpoint_metrics", "api_endpoint_metrics", "row_count")],
        API_CHECKS,
    )
