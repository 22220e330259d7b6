"""INP causes: ``inp_interactions``, one row per interaction the browsers reported, with its parts and the
scripts of the long animation frames it overlapped, each marked first or third party, then its hour and day
states (``inp_periods``, ``inp_script_periods``) the INP view reads (docs/performance.md, "INP causes"). Built
like the performance steps (pipelines/assets/performance.py: the hours with new transactions since its
watermark), with the projects' own script hosts read from the control store each run.
"""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dataclasses
from collections.abc import Iterator

import dagster as dg
from dagster import AssetExecutionContext

from pipelines.assets.common import RAW_SPANS, RAW_TRANSACTIONS, AssetResult, MartCheck
from pipelines.assets.performance import Stack, StateTable, refresh_stack
from pipelines.partitions import MISSING_DAYS_NOTE, daily_partitions
from pipelines.resources import ClickHouseResource, ControlStoreResource
from stacklens.performance.inp.hosts import all_first_party_hosts

INTERACTIONS = Stack(
    "inp_interactions",
    ("transactions",),
    (
        StateTable(
            "inp_interactions",
            ("inp_interactions",),
            (RAW_TRANSACTIONS, RAW_SPANS),
            "One row per interaction a browser reported as a standalone INP span (`ui.interaction.*`): page, "
            "environment, release, browser, target (the element) and type, INP, its input delay, processing and "
            "presentation delay (NULL without attribution), and the scripts of the long animation frames it "
            "overlapped (URL, host, function, invoker, duration, part, third party or not by host and the "
            "project's own hosts), with the first- and third-party time; an INP span of @sentry/browser without "
            "scripts of its own takes the long-animation-frame spans of its page load that overlap it. Refreshed for "
            "the hours with new transactions. Read by the INP view and API (stacklens/performance/inp/reads.py) and the metrics "
            "inp_input_delay_ms, inp_processing_ms, inp_presentation_ms, inp_third_party_ms (budgets, alert "
            "rules, Explore, exports).",
            (
                MartCheck(
                    "inp_interactions_add_up",
                    "Among the interactions the run wrote, every script has its host, duration, part and party, "
                    "and the first- and third-party times add up to the time of the scripts.",
                ),
            ),
        ),
        StateTable(
            "inp_periods",
            ("inp_periods_hour", "inp_periods_day"),
            ("inp_interactions",),
            "INP states per project, period (grain `hour` or `day`), environment, release, browser, page, target "
            "and type: interactions, those with attribution and with script data, sums and 1 % log histograms of "
            "INP and its three parts and of the third-party script time (percentiles within 0.5 %, counts and "
            "sums exact), the first- and third-party script time. Hours from `inp_interactions`, days from the "
            "hours. Read by the INP view and API, the PDF and CSV (whole hours and days of the window; its edge "
            "hours from `inp_interactions`).",
            (
                MartCheck(
                    "inp_periods_add_up",
                    "In the periods the run wrote, the INP histogram counts every interaction, each part's "
                    "histogram those with attribution, the third-party one no more than those with script data, "
                    "and every period starts on a multiple of its grain.",
                ),
            ),
        ),
        StateTable(
            "inp_script_periods",
            ("inp_script_periods_hour", "inp_script_periods_day"),
            ("inp_interactions",),
            "Script states per project, period (grain `hour` or `day`), environment, release, browser, page and "
            "script of the interactions' long animation frames (source URL, host, function, invoker, first or "
            "third party): runs, interactions it ran in, its time in all and per part. Hours from "
            "`inp_interactions`, days from the hours. Read by the INP view's scripts (API, page, PDF, CSV).",
            (
                MartCheck(
                    "inp_script_periods_add_up",
                    "In the periods the run wrote, no script ran in more interactions than it ran, and its "
                    "time per part adds up to its time.",
                ),
            ),
        ),
    ),
)


def host_parameters(hosts: dict[int, list[str]]) -> dict[str, object]:
    """The query parameters naming each project's own hosts (projects without any are left out)."""
    ids = sorted(hosts)
    return {"fp_projects": ids, "fp_hosts": [hosts[i] for i in ids]}


@dg.multi_asset(
    name="inp_interaction_states",
    description="Interactions (INP) with their parts and scripts, then their hour and day states, for the hours "
    "with new transactions.",
    specs=[
        dg.AssetSpec(
            table.name,
            deps=list(table.deps),
            description=table.description + MISSING_DAYS_NOTE,
            group_name="performance",
            kinds={"clickhouse"},
        )
        for table in INTERACTIONS.tables
    ],
    check_specs=[check.spec(table.name) for table in INTERACTIONS.tables for check in table.checks],
    partitions_def=daily_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    can_subset=False,
)
def inp_interaction_states(
    context: AssetExecutionContext, warehouse: ClickHouseResource, control_store: ControlStoreResource
) -> Iterator[AssetResult]:
    with control_store.session() as session:
        hosts = all_first_party_hosts(session)
    stack = dataclasses.replace(INTERACTIONS, parameters=host_parameters(hosts))
    yield from refresh_stack(context, warehouse.get_client(), stack)
