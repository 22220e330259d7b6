from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stacklens.errors import InvalidInput
from stacklens.outcomes.reads import OutcomeQuery, OutcomeRow, by_reason, totals_by_outcome

HOUR = datetime(2026, 11, 25, 10, tzinfo=UTC)


def _row(outcome: str, category: str, reason: str, n: int) -> OutcomeRow:
    return OutcomeRow(HOUR, 1, "shop", category, outcome, reason, n)


def test_totals_name_every_outcome_and_reasons_are_largest_first() -> None:
    rows = [
        _row("accepted", "error", "", 3),
        _row("rate_limited", "error", "org_quota", 5),
        _row("rate_limited", "error", "org_quota", 1),
    ]
    assert totals_by_outcome(rows) == {
        "accepted": 3,
        "filtered": 0,
        "rate_limited": 6,
        "invalid": 0,
        "too_large": 0,
        "dropped": 0,
    }
    assert by_reason(rows) == [("rate_limited", "error", "org_quota", 6), ("accepted", "error", "", 3)]


def test_a_query_names_a_known_range_and_category() -> None:
    assert OutcomeQuery("7d", 0, "span").checked().range == "7d"
    with pytest.raises(InvalidInput, match="range"):
        OutcomeQuery("1y").checked()
    with pytest.raises(InvalidInput, match="category"):
        OutcomeQuery("24h", 0, "profile").checked()
