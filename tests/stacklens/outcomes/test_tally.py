from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from stacklens.outcomes import tally
from stacklens.outcomes.counting import DISCARDS_OVER_BOUND, SDK_MARK
from stacklens.outcomes.reads import OutcomeQuery, outcome_rows
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


def test_counts_add_up_in_memory_and_land_in_one_insert(settings: Settings) -> None:
    apply_migrations(settings)
    at = datetime.now(UTC)
    for _ in range(3):
        tally.count_outcomes(settings, 5, Counter({(9, "error", "accepted", ""): 2}), at)
    tally.count_outcomes(settings, 6, Counter({(9, "error", "accepted", ""): 1}), at)  # another organization
    rows = outcome_rows(settings, get_warehouse(settings), 5, OutcomeQuery(), {9: "shop"}, at)
    assert [(r.project, r.category, r.outcome, r.quantity) for r in rows] == [
        ("shop", "error", "accepted", 6)
    ]
    tally.flush_all()  # nothing left to write twice
    again = outcome_rows(settings, get_warehouse(settings), 5, OutcomeQuery(), {}, at)
    assert [(r.project_id, r.project, r.quantity) for r in again] == [(9, None, 6)]


def test_client_reports_add_at_most_the_projects_bound_a_minute_and_the_mark_is_never_stored(
    settings: Settings,
) -> None:
    apply_migrations(settings)
    at = datetime.now(UTC)
    third = tally.MAX_DISCARDS_PER_MINUTE // 3 + 1
    for _ in range(4):  # each request: one report (accepted) saying it dropped a third of the bound
        tally.count_outcomes(
            settings,
            7,
            Counter(
                {
                    (4, "client_report", "accepted", ""): 1,
                    (4, "transaction", "filtered", SDK_MARK + "sample_rate"): third,
                }
            ),
            at,
        )
    tally.count_outcomes(  # another project has a minute of its own
        settings, 7, Counter({(5, "transaction", "filtered", SDK_MARK + "sample_rate"): third}), at
    )
    rows = outcome_rows(settings, get_warehouse(settings), 7, OutcomeQuery(), {4: "shop", 5: "api"}, at)
    found = {(r.project, r.category, r.outcome, r.reason): r.quantity for r in rows}
    assert found == {
        ("shop", "transaction", "filtered", "sample_rate"): tally.MAX_DISCARDS_PER_MINUTE,
        ("shop", "client_report", "accepted", ""): 2,  # within the bound
        ("shop", "client_report", "invalid", DISCARDS_OVER_BOUND): 2,  # cut, then refused whole
        ("api", "transaction", "filtered", "sample_rate"): third,
    }
