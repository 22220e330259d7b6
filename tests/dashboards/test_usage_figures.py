from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboards.usage_figures import outcomes_figure
from stacklens.outcomes.reads import OutcomeRow

HOUR = datetime(2026, 11, 25, 10, tzinfo=UTC)


def test_bars_per_outcome_with_gaps_not_zeros() -> None:
    rows = [
        OutcomeRow(HOUR, 1, "shop", "error", "accepted", "", 3),
        OutcomeRow(HOUR, 2, "admin", "transaction", "accepted", "", 2),
        OutcomeRow(HOUR + timedelta(hours=3), 1, "shop", "error", "rate_limited", "org_quota", 4),
    ]
    figure = outcomes_figure(rows, HOUR - timedelta(hours=1), HOUR + timedelta(hours=5))
    traces = {trace["name"]: trace for trace in figure["data"]}
    assert set(traces) == {"accepted", "rate limited"}
    assert (
        traces["accepted"]["y"] == [5] and len(traces["accepted"]["x"]) == 1
    )  # no bar drawn for empty hours
    assert traces["rate limited"]["y"] == [4]
    assert figure["layout"]["yaxis"]["title"]["text"] == "Items per hour"
    assert figure["layout"]["xaxis"]["title"]["text"] == "Time (UTC)"
