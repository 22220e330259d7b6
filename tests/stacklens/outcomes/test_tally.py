from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from stacklens.outcomes import tally
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
