"""Performance domain: the page-load, resource-request and API-call tables every performance page, API view,
budget and alert rule reads — raw rows → facts (one row per page load / request / call) → states by grain
(minute, hour, day, blocks of 2–16 days) — each kind built by one step (a `multi_asset`) for the hours with
new raw rows.

Each table is an asset of its own name with its own checks; a kind's tables are written together because its
states are built from the facts the same step just refreshed, hour range by hour range (a tick costs the new
hours' raw rows once, not once per table). Lineage and the queries: docs/pipelines.md, docs/performance.md.
"""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import dagster as dg
from clickhouse_connect.driver.client import Client
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from pipelines.assets.common import (
    RAW_SPANS,
    RAW_TRANSACTIONS,
    AssetResult,
    MartCheck,
    advance_watermark,
    run_days,
    scheduled_days,
)
from pipelines.partitions import MISSING_DAYS_NOTE, daily_partitions
from pipelines.resources import ClickHouseResource
from stacklens.performance.score import sql_parameters
from stacklens.warehouse.queries import load_query, scalar_row


@dataclass(frozen=True)
class StateTable:
    """A warehouse table one step writes, and the asset of the same name: the pipeline queries that write it
    (``queries/pipelines/<name>.sql``, each an ``INSERT … SELECT`` over the hours ``[start, end)``, in order),
    what it is built from, its description (grain and readers) and its checks. The rows a run wrote are
    counted by ``queries/pipelines/written/<name>.sql``, in the time span of the hours it refreshed (macros
    written_facts, written_examples, written_states), so counting them reads that span, not the table's
    history."""

    name: str
    queries: tuple[str, ...]
    deps: tuple[Any, ...]
    description: str
    checks: tuple[MartCheck, ...]

    @property
    def written(self) -> str:
        """The query counting the rows a run wrote (stamped with its version ``v``, in ``[start, end)``)."""
        return load_query(f"pipelines/written/{self.name}")


@dataclass(frozen=True)
class Stack:
    """The tables of one kind of data, refreshed together for the hours with new rows of ``sources``: its
    facts first, then the states built from them. Its watermark is its facts' (they are what reads the raw
    layer)."""

    name: str  # the step (op) that writes them
    sources: tuple[str, ...]  # the raw tables whose arrivals mark hours to refresh
    tables: tuple[StateTable, ...]
    parameters: dict[str, Any] = field(default_factory=dict)  # further query parameters (the score's)

    @property
    def watermark(self) -> str:
        return self.tables[0].name

    @property
    def queries(self) -> tuple[str, ...]:
        return tuple(q for table in self.tables for q in table.queries)


def _grains(table: str) -> tuple[str, ...]:
    """The queries of a state table's grains: minutes and hours from the facts, days from the hours, blocks of
    days from the days — in that order, within one hour range. The hours come first: the days merge them."""
    return (f"{table}_hour", f"{table}_minute", f"{table}_day", f"{table}_blocks")


PAGELOADS = Stack(
    "pageload_states",
    ("transactions", "spans"),
    (
        StateTable(
            "pageload_facts",
            ("pageload_facts",),
            (RAW_TRANSACTIONS, RAW_SPANS),
            "One row per page load (transactions with op `pageload`): its project, time, page (route), "
            "environment, release and browser; load time, TTFB, FCP, LCP, INP, CLS and DOM ready (NULL when not "
            "reported), and the page load's own INP measurement (Explore's); total resource time; its browser "
            "API calls (count, failures, durations); JavaScript bytes and the bytes of all its resources and "
            "calls; its performance score (stacklens/performance/score.py); each measure's 1 % log-histogram "
            "entry. Refreshed for the hours with new transactions "
            "or spans. Read by the page-load states (`pageload_periods`, `pageload_examples`), not by pages.",
            (
                MartCheck(
                    "pageload_facts_valid",
                    "Among the page loads the run wrote, none has more failed API calls than calls, a call "
                    "without its duration, or a score outside 0–100.",
                ),
            ),
        ),
        StateTable(
            "pageload_periods",
            _grains("pageload_periods"),
            ("pageload_facts",),
            "Page-load states per project, period, page, environment, release and browser; grain `minute`, "
            "`hour`, `day` and aligned blocks of days `days_2` … `days_16`: page loads, sums and 1 % "
            "log histograms of load time, TTFB, DOM ready, LCP, INP (and the page loads' own INP, which Explore "
            "reads), CLS, FCP and API calls (percentiles within 0.5 %, counts and sums exact), the score, "
            "JavaScript and total bytes, the distribution's counts, and "
            "the 3 fastest and slowest page loads. Minutes and hours from `pageload_facts`, days from the hours, "
            "blocks from the days. Read by the overview, pages, page detail, trends and releases views and API, "
            "the facets, the performance PDF and CSV, every budget and performance alert rule and their "
            "previews (window_values.py), the alerts' release (macro pageload_window, window_states.sql).",
            (
                MartCheck(
                    "pageload_periods_add_up",
                    "In the periods the run wrote, each histogram counts exactly its measure's page loads (load "
                    "time all of them) and API calls, and every period starts on a multiple of its grain.",
                ),
            ),
        ),
        StateTable(
            "pageload_examples",
            ("pageload_examples_hour", "pageload_examples_day"),
            ("pageload_facts",),
            "Example page loads per project, period (grain `hour` or `day`), page, environment, release, "
            "browser and 1 % load-time bucket: the page load nearest the bucket's centre. Hours from "
            "`pageload_facts`, days from the hours. Read by the page detail's median samples (sample_medians.sql).",
            (
                MartCheck(
                    "pageload_examples_in_their_period",
                    "Every example the run wrote lies in its period and in its load-time bucket.",
                ),
            ),
        ),
    ),
    sql_parameters(),
)

RESOURCES = Stack(
    "resource_states",
    ("spans", "transactions"),
    (
        StateTable(
            "resource_facts",
            ("resource_facts",),
            (RAW_SPANS, RAW_TRANSACTIONS),
            "One row per resource span and browser API call of a page load or navigation: its type (JavaScript, "
            "CSS, Images, Fonts, API, Other), URL without query, host, sizes, duration, render-blocking status, "
            "its page load's browser, FCP and host, and whether it is its page load's first request of the "
            "resource / of the type. Refreshed for the hours with new spans or transactions. Read by "
            "`resource_request_periods`, not by pages.",
            (
                MartCheck(
                    "resource_facts_first_flags",
                    "Among the requests the run wrote, a page load's first request of a type is also its first "
                    "request of that resource.",
                ),
            ),
        ),
        StateTable(
            "resource_request_periods",
            _grains("resource_request_periods"),
            ("resource_facts",),
            "Resource-request states per project, period, environment, release, browser, resource type, "
            "resource and host (browser API calls one row per type); grain `minute`, `hour`, `day` and aligned "
            "blocks `days_2` … `days_16`: requests, page loads with it, bytes (encoded, decoded, transferred), "
            "load time sum and 1 % log histogram, render-blocking counts, cache hits, FCP share, compression, "
            "up to 10 sample pages. Minutes and hours from `resource_facts`, days from the hours, blocks from the "
            "days. Read by the resources and recommendations views and API, the PDF and CSV (macro "
            "resource_window).",
            (
                MartCheck(
                    "resource_request_periods_add_up",
                    "In the periods the run wrote, every request is blocking, non-blocking or unknown once, the "
                    "load-time histogram counts every request, page loads never exceed requests, and every "
                    "period starts on a multiple of its grain.",
                ),
            ),
        ),
    ),
)

ENDPOINTS = Stack(
    "endpoint_states",
    ("transactions", "spans"),
    (
        StateTable(
            "endpoint_facts",
            ("endpoint_facts",),
            (RAW_TRANSACTIONS, RAW_SPANS),
            "One row per API call: server side from http.server transactions (path = the route), client side "
            "from browsers' http.client spans, with the parameterised path (ids, UUIDs and digests folded), "
            "method, status, duration, bytes, the calling page and page load's browser, and its page load's "
            "first call of the endpoint and calls of it. Refreshed for the hours with new transactions or "
            "spans. Read by `endpoint_call_periods`, not by pages.",
            (
                MartCheck(
                    "endpoint_facts_per_load",
                    "Every call the run wrote counts at least itself among its page load's calls of the endpoint.",
                ),
            ),
        ),
        StateTable(
            "endpoint_call_periods",
            _grains("endpoint_call_periods"),
            ("endpoint_facts",),
            "API-call states per project, period, environment, release, browser, source (client / server), "
            "method and path; grain `minute`, `hour`, `day` and aligned blocks `days_2` … `days_16`: calls, "
            "page loads calling it, duration sum and 1 % log histogram, status classes (2xx … 5xx, none), bytes, "
            "the largest fan-out per page load, sample pages and the 5 slowest calls. Minutes and hours from "
            "`endpoint_facts`, days from the hours, blocks from the days. Read by the endpoints, endpoint detail "
            "and recommendations views and API, the PDF and CSV (macro endpoint_window), and by the budgets and "
            "alert rules on the API response time and their previews (the server side; window_values.py).",
            (
                MartCheck(
                    "endpoint_call_periods_add_up",
                    "In the periods the run wrote, status classes never exceed the calls, the duration "
                    "histogram counts every call, page loads never exceed calls, and every period starts on a "
                    "multiple of its grain.",
                ),
            ),
        ),
    ),
)

STACKS = (PAGELOADS, RESOURCES, ENDPOINTS)
TABLES: dict[str, StateTable] = {table.name: table for stack in STACKS for table in stack.tables}
# Every performance fill in the order a step runs it for an hour range (benchmarks and test seeds use it too).
STATE_QUERIES = tuple(q for stack in STACKS for q in stack.queries)


def refresh_stack(context: AssetExecutionContext, client: Client, stack: Stack) -> Iterator[AssetResult]:
    """Refresh the stack's tables for the run's days, without re-reading a day's raw rows:

    1. the hours of those days that received rows of the stack's sources since its watermark (every hour of
       the run's range for a run without the scheduler's day list: a backfill);
    2. for each run of such hours, every query of every table in order — the facts from the raw rows of those
       hours, then the states from the facts (minutes, hours), the days from the hours, the blocks from the
       days;
    3. the watermark moved to where the scheduled tick read up to; one materialization per table, with the
       rows the run wrote and the table's checks over them (one query for the step's counts and checks)."""
    version = ops.now_version()
    ranges = run_days(context, stack.watermark)
    since = (
        ops.read_since(client, [stack.watermark]) if scheduled_days(context, stack.watermark) else ops.EPOCH
    )
    refreshed: list[tuple[datetime, datetime]] = []
    for start, end in ranges:
        bounds = ops.day_bounds(start, end)
        dirty = ops.dirty_hours(client, list(stack.sources), since, bounds["start"], bounds["end"])
        for first, last in ops.hour_ranges(dirty):
            hours = {"start": first, "end": last, "materialized_at": version}
            for query in stack.queries:
                ops.run_insert(client, query, {**stack.parameters, **hours})
            refreshed.append((first, last))
    advance_watermark(context, client, stack.watermark)
    span = (min(f for f, _ in refreshed), max(last for _, last in refreshed)) if refreshed else None
    written, bad = _written_and_bad(client, stack, version, span)
    common = {
        "days": dg.MetadataValue.text(", ".join(f"{s}..{e}" for s, e in ranges)),
        "hours_refreshed": dg.MetadataValue.int(
            sum(int((b - a).total_seconds()) // 3600 for a, b in refreshed)
        ),
    }
    for table in stack.tables:
        yield dg.MaterializeResult(
            asset_key=table.name,
            metadata={"row_count": dg.MetadataValue.int(written[table.name]), **common},
            check_results=[
                dg.AssetCheckResult(
                    asset_key=dg.AssetKey(table.name),
                    check_name=check.name,
                    passed=bad[check.name] == 0,
                    metadata={"bad_rows": bad[check.name]},
                )
                for check in table.checks
            ],
        )


def _written_and_bad(
    client: Client, stack: Stack, version: datetime, span: tuple[datetime, datetime] | None
) -> tuple[dict[str, int], dict[str, int]]:
    """Per table the rows the run wrote (stamped with ``version``), and per check the rows that break it among
    them: one query for the step, each a scalar subquery bounded by the span of the hours the run
    refreshed, so none reads a table's history (named queries: pipelines/written/, pipelines/checks/). A
    run that refreshed nothing wrote nothing and broke nothing."""
    checks = [check for table in stack.tables for check in table.checks]
    if span is None:
        return {table.name: 0 for table in stack.tables}, {check.name: 0 for check in checks}
    sql = scalar_row([t.written for t in stack.tables] + [check.sql for check in checks])
    parameters = {"v": version, "start": span[0], "end": span[1]}
    row = [int(n) for n in client.query(sql, parameters=parameters).result_rows[0]]
    tables = len(stack.tables)
    return (
        {table.name: n for table, n in zip(stack.tables, row[:tables], strict=True)},
        {check.name: n for check, n in zip(checks, row[tables:], strict=True)},
    )


def _stack_asset(stack: Stack, description: str) -> dg.AssetsDefinition:
    """The multi-asset writing ``stack``'s tables: one spec per table (its own key, description, dependencies
    and checks), daily partitions, one step."""

    @dg.multi_asset(
        name=stack.name,
        description=description,
        specs=[
            dg.AssetSpec(
                table.name,
                deps=list(table.deps),
                description=table.description + MISSING_DAYS_NOTE,
                group_name="performance",
                kinds={"clickhouse"},
            )
            for table in stack.tables
        ],
        check_specs=[check.spec(table.name) for table in stack.tables for check in table.checks],
        partitions_def=daily_partitions,
        backfill_policy=dg.BackfillPolicy.single_run(),
        can_subset=False,
    )
    def _refresh(context: AssetExecutionContext, warehouse: ClickHouseResource) -> Iterator[AssetResult]:
        yield from refresh_stack(context, warehouse.get_client(), stack)

    return _refresh


pageload_states = _stack_asset(
    PAGELOADS,
    "Page loads: facts, then their minute, hour, day and block-of-days states and the example page loads, for "
    "the hours with new transactions or spans.",
)
resource_states = _stack_asset(
    RESOURCES,
    "Resource requests: facts, then their minute, hour, day and block-of-days states, for the hours with new "
    "spans or transactions.",
)
endpoint_states = _stack_asset(
    ENDPOINTS,
    "API calls: facts, then their minute, hour, day and block-of-days states, for the hours with new "
    "transactions or spans.",
)
