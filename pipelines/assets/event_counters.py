"""The insert-time tables of the errors side: filled by materialized views in the `INSERT` that stores the
events (and the raw marks of every raw table), then compared with the stored events and repaired after a crash
by one step, `event_counters` (a `multi_asset`, first step of `issues_job`).

Each table is an asset of its own name, so the graph answers "what does the issue list read, and what fills
it?"; each table that counts events has a check built from its comparison query
(``queries/pipelines/<table>_compare.sql``), which fails when the table still counts fewer events than are
stored after the run's repair. The comparison and the repair are the domain's
(:mod:`stacklens.issues.counters`); this step runs them and reports per table. docs/pipelines.md and
docs/decisions.md ("Insert-time counters after a crash") say why and what it costs."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_EVENTS, RAW_SESSIONS, RAW_SPANS, RAW_TRANSACTIONS, AssetResult
from pipelines.resources import ClickHouseResource
from stacklens.issues.counters import COUNTED_TABLES, CounterRepair, TableComparison, repair_counters

STEP = "event_counters"  # the step, and the watermark it keeps
GROUP = "insert_time"
# issue_element_arrivals keeps 3 days (migration 0126); an older watermark reads 2 days back.
ARRIVALS_KEPT = timedelta(days=2)
COUNTED = frozenset(t.name for t in COUNTED_TABLES)
ALL_RAW = (RAW_EVENTS, RAW_TRANSACTIONS, RAW_SPANS, RAW_SESSIONS)


@dataclass(frozen=True)
class InsertTimeTable:
    """A table the views fill at insert and this step keeps equal to the stored rows: its sources, its
    description (grain and readers) and the raw tables whose dead rows it is fed again from."""

    name: str
    deps: tuple[dg.AssetKey, ...]
    description: str
    fed_from: tuple[str, ...] = ("events",)

    @property
    def check(self) -> str | None:
        """Its check's name, for a table that counts events (it has a comparison query); else None."""
        return f"{self.name}_matches_events" if self.name in COUNTED else None


TABLES = (
    InsertTimeTable(
        "issue_live_counters",
        (RAW_EVENTS,),
        "Per project and issue: events, users, first and last seen, when its latest event arrived and its latest "
        "title, kept by a view at insert (table issue_live_counters). Read by the issue list (issue_list), the "
        "issues asset, the ownership rules' new issues, the alerts' titles, new issues and regressions.",
    ),
    InsertTimeTable(
        "issue_totals_daily",
        (RAW_EVENTS,),
        "Per project, issue and UTC day: events, users, first and last seen, kept by a view at insert (table "
        "issue_totals_daily). Read by the issue list's sparklines.",
    ),
    InsertTimeTable(
        "issue_facets_daily",
        (RAW_EVENTS,),
        "Per project, issue, UTC day and facet combination (environment, release, level, service, browser, …): "
        "events and users, kept by a view at insert (table issue_facets_daily). Read by the issue list's "
        "filters, facet values and sparklines.",
    ),
    InsertTimeTable(
        "issue_tags_daily",
        (RAW_EVENTS,),
        "Per project, issue, UTC day, tag key and value: events, kept by a view at insert (table "
        "issue_tags_daily). Read by the issue list's tag filters.",
    ),
    InsertTimeTable(
        "release_error_counts",
        (RAW_EVENTS,),
        "Per project and release: error events and when the first arrived, kept by a view at insert (table "
        "release_error_counts). Read by the releases view's error figures and a release's existence check.",
    ),
    InsertTimeTable(
        "issue_rollup",
        (RAW_EVENTS,),
        "Per project and issue: the states of the latest title, culprit, level and platform, first and last "
        "seen and release, releases, environments and services, kept by a view at insert (table issue_rollup). "
        "Read by the issues asset, which merges the touched issues' states.",
    ),
    InsertTimeTable(
        "issue_element_arrivals",
        (RAW_EVENTS,),
        "Per receive time, project, issue and reason: the hashed elements (users, 5-minute windows, in-app "
        "frames, releases) its new events bring, kept 3 days by a view at insert (table issue_element_arrivals). Read by the issues asset (users "
        "affected) and related_issues (sketches), from their watermarks.",
    ),
    InsertTimeTable(
        "raw_arrival_hours",
        ALL_RAW,
        "Per raw table, project and hour of the rows' own time: when its newest row was received, kept by views "
        "at insert (table raw_arrival_hours). Read by the partitioned assets' dirty hours and days and by the "
        "pages' notice that their marts are still building.",
        ("events", "transactions"),
    ),
    InsertTimeTable(
        "raw_received",
        ALL_RAW,
        "Per raw table: the newest row received, kept by views at insert (table raw_received). Read by the "
        "schedules' and sensors' new-data plans and every incremental asset's upper bound (max_received).",
        ("events", "transactions"),
    ),
)


def _check_spec(table: InsertTimeTable) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        str(table.check),
        asset=table.name,
        description=f"Every key of {table.name} holding rows of a dead landing attempt counts the events a query "
        f"of the stored events gives, after the run's repair (queries/pipelines/{table.name}_compare.sql); "
        "the metadata shows the comparison and what was added back.",
    )


def _comparison(found: TableComparison | None) -> dict[str, Any]:
    """A counted table's comparison as metadata (all zero when no dead attempt touched it)."""
    return {
        "keys_compared": found.keys if found else 0,
        "keys_short": found.short_keys if found else 0,
        "events_missing": found.missing if found else 0,
        "events_in_excess": found.excess if found else 0,
        "keys_left_landing": found.in_flight if found else 0,
        "events_missing_after_repair": found.remaining if found else 0,
    }


def table_results(report: CounterRepair, common: dict[str, Any]) -> Iterator[AssetResult]:
    """One materialization per table with the run's figures; a counted table's with its check, which passes
    when the table counts every stored event of the keys compared once the repair ran (excess is reported,
    never a failure: the retention removes events a counter keeps counting)."""
    compared = {t.table: t for t in report.tables}
    for table in TABLES:
        dead_rows = sum(a.rows for a in report.dead if a.source in table.fed_from)
        if table.check is None:
            yield dg.MaterializeResult(
                asset_key=table.name,
                metadata={"row_count": dg.MetadataValue.int(dead_rows), **common},
            )
            continue
        figures = _comparison(compared.get(table.name))
        yield dg.MaterializeResult(
            asset_key=table.name,
            metadata={"row_count": dg.MetadataValue.int(figures["keys_short"]), **common},
            check_results=[
                dg.AssetCheckResult(
                    asset_key=dg.AssetKey(table.name),
                    check_name=table.check,
                    passed=figures["events_missing_after_repair"] == 0,
                    metadata={**figures, "dead_attempt_rows": dead_rows},
                )
            ],
        )


@dg.multi_asset(
    name=STEP,
    description="The insert-time tables fed from the events and the raw marks, kept equal to the stored rows "
    "after a crash: compared for the keys of dead landing attempts, shortfalls added back.",
    specs=[
        dg.AssetSpec(
            table.name,
            deps=list(table.deps),
            description=table.description,
            group_name=GROUP,
            kinds={"clickhouse"},
        )
        for table in TABLES
    ],
    check_specs=[_check_spec(table) for table in TABLES if table.check],
    can_subset=False,
)
def event_counters(context: AssetExecutionContext, warehouse: ClickHouseResource) -> Iterator[AssetResult]:
    """A process killed between the insert of a batch's rows and its views keeps the rows and loses the views'
    blocks; the resend answers the rows as duplicates. Each run finds the landing attempts of rows received
    since its watermark that no batch record carries and that are no longer landing, compares every counter
    of their issues, days, facets, tag pairs and releases with the stored events, adds each shortfall back
    as one correction row, feeds the other tables their rows again (states and sets: idempotent) and marks
    their hours as arrived so the marts rebuild them. A run with no such attempt costs two small queries."""
    client = warehouse.get_client()
    version = ops.now_version()
    since = max(ops.read_since(client, [STEP]), version - ARRIVALS_KEPT)
    report = repair_counters(client, since, version, arrived=version)
    resume = report.resume_from or version
    ops.set_watermark(client, STEP, resume)
    if report.missing:
        context.log.warning(
            f"{report.missing} events were missing from the insert-time counters "
            f"({len(report.dead)} landing attempts stopped after storing rows); added back"
        )
    common = {
        "read_from": dg.MetadataValue.text(since.isoformat()),
        "read_to": dg.MetadataValue.text(version.isoformat()),
        "resume_from": dg.MetadataValue.text(resume.isoformat()),
        "dead_attempts": dg.MetadataValue.int(len(report.dead)),
        "attempts_still_landing": dg.MetadataValue.int(len(report.in_flight)),
    }
    yield from table_results(report, common)
