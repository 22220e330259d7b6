"""Budgets judged against the embedded warehouse: current value, samples, status, margin, failing-since, the
30-day daily history ending on the current evaluation, and the byte, FCP and error % budgets. Percentiles come
from the views' 1 % log histograms (within 0.5 % of the exact value); bytes, counts and shares are exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from stacklens.performance.budget_eval import BudgetSpec, evaluate, failed_days, histories, history
from tests.stacklens.performance.budget_seed import fold, page_loads, server_calls

NOW = datetime.now(UTC)


def spec(metric: str, value: float, **kw: object) -> BudgetSpec:
    fields: dict = {"statistic": "p75", "scope": "*", "window_days": 7, "min_samples": 5, **kw}
    return BudgetSpec(
        1,
        41,
        metric,
        fields["statistic"],
        fields["scope"],
        value,
        fields["window_days"],
        fields["min_samples"],
    )


def test_pass_fail_insufficient_and_failing_since(client) -> None:
    # /slow: slow page loads every day of the last 10 days; /fast: fast ones; /rare: two loads only.
    for day in range(10):
        at = NOW - timedelta(days=day, hours=3)
        page_loads(client, 1, 41, "/slow", at, [3000.0] * 3, js_bytes=400_000)
        page_loads(client, 1, 41, "/fast", at, [800.0] * 3, js_bytes=100_000, status=500 if day == 0 else 200)
        # The API behind it: a 5xx and a 4xx answer on day 0, calls without a status (counted, not failed)
        # after.
        server_calls(client, 1, 41, "/api/fast", at, [500, 404, 200] if day == 0 else [200, 302, 0])
    page_loads(client, 1, 41, "/rare", NOW - timedelta(hours=2), [9000.0, 9000.0])
    fold(client)
    slow, fast, rare, empty = (
        spec("load_time_ms", 2000, scope="/slow"),
        spec("load_time_ms", 2000, scope="/fast"),
        spec("load_time_ms", 2000, scope="/rare"),
        spec("lcp_ms", 2500, scope="/never-seen"),
    )
    got = evaluate(client, [slow, fast, rare, empty], NOW)
    assert [g.status for g in got] == ["fail", "pass", "insufficient_data", "insufficient_data"]
    assert got[0].value == pytest.approx(3000, rel=0.005) and got[0].samples == 21
    assert got[0].margin == pytest.approx(2000 - got[0].value)
    assert got[1].value == pytest.approx(800, rel=0.005) and got[1].failing_since is None
    assert got[2].samples == 2 and got[2].value == pytest.approx(9000, rel=0.005)  # too few samples to judge
    assert got[3].value is None and got[3].samples == 0  # no data at all is not a pass
    # Failing at every daily evaluation with data: the run starts at the first day it had enough samples.
    since = got[0].failing_since
    assert since is not None and NOW - timedelta(days=10) < since <= NOW - timedelta(days=7)

    points = history(client, slow, NOW)
    midnight = NOW.replace(hour=0, minute=0, second=0, microsecond=0)
    assert len(points) == 32 and points[-2][0] == midnight and points[-1][0] == NOW
    assert points[-1][1:] == (got[0].value, got[0].samples)  # the history ends on the status's evaluation
    # Many budgets' histories in one query (what the budget_status run reads for failing-since) are the same.
    both = histories(
        client, [slow, fast], NOW, [(got[0].value, got[0].samples), (got[1].value, got[1].samples)]
    )
    assert both == [points, history(client, fast, NOW)]
    failed, judged = failed_days(slow, points)
    assert failed == judged and 8 <= judged <= 10
    assert failed_days(fast, history(client, fast, NOW))[0] == 0

    js = [
        spec("js_bytes", 300_000, scope="/slow", statistic="avg"),
        spec("js_bytes", 300_000, scope="/fast", statistic="avg"),
    ]
    bytes_slow, bytes_fast = evaluate(client, js, NOW)
    assert (bytes_slow.status, bytes_slow.value) == ("fail", 400_000) and bytes_slow.samples == 21
    assert (bytes_fast.status, bytes_fast.value) == ("pass", 100_000)
    errors, page_errors, fcp = evaluate(
        client,
        [
            spec("error_pct", 5, scope="/api/fast", statistic="avg"),
            spec("error_pct", 5, scope="/fast", statistic="avg"),
            spec("fcp_ms", 1000, scope="/slow"),
        ],
        NOW,
    )
    # The error rate: API calls answered 4xx or 5xx over all calls of the route, a page load is no API call.
    assert errors.status == "fail" and errors.samples == 21 and errors.value == pytest.approx(100 * 2 / 21)
    assert (page_errors.status, page_errors.samples) == ("insufficient_data", 0)
    assert fcp.status == "fail" and fcp.value == pytest.approx(1500, rel=0.005)


def test_failing_since_names_when_the_failing_began_not_where_the_chart_begins(client) -> None:
    """Issue #47: a budget failing at every evaluation of its 30-day history started failing before the chart;
    failing-since is followed back to the day it began (here 40 days ago, when its page first loaded)."""
    first = NOW - timedelta(days=39, hours=3)
    for day in range(40):
        page_loads(client, 1, 42, "/old", first + timedelta(days=day), [3000.0] * 3)
    fold(client, days=42)
    old = BudgetSpec(1, 42, "load_time_ms", "p75", "/old", 2000, 7, 5)
    (got,) = evaluate(client, [old], NOW)
    chart = history(client, old, NOW)
    assert got.status == "fail" and got.failing_since is not None
    assert got.failing_since < chart[0][0]  # not where the 30-day chart begins
    # The first midnight whose 7-day window held 5 samples: the one after the second day of data (the first
    # midnight's window holds only the first day's 3), whatever the time of day the test runs at.
    first_midnight = first.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    assert got.failing_since == first_midnight + timedelta(days=1)
