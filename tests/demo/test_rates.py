"""One daily shape and rate for the demo's history and its live traffic: both draw from
``rates.expected_per_hour``, so an hour of live traffic looks like the same hour of any history day; the
demo's alert rules and budgets are chosen against that rate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from demo import rates
from demo.alerts import BUSY_ISSUE_EVENTS, demo_rules
from demo.budgets import DEMO_BUDGETS

MIDNIGHT = datetime(2026, 11, 2, tzinfo=UTC)


def test_the_daily_shape_peaks_in_the_evening_and_keeps_the_mean() -> None:
    day = rates.expected_between(MIDNIGHT, MIDNIGHT + timedelta(days=1))
    assert abs(day.visits - 24 * rates.VISITS_PER_HOUR) < 0.01
    assert abs(day.page_loads - 24 * rates.PAGE_LOADS_PER_HOUR) < 0.01
    peak = rates.expected_per_hour(MIDNIGHT + timedelta(hours=19))
    night = rates.expected_per_hour(MIDNIGHT + timedelta(hours=7))
    assert abs(peak.page_loads / night.page_loads - 3.0) < 1e-9
    hours = [rates.expected_per_hour(MIDNIGHT + timedelta(hours=h)).visits for h in range(24)]
    assert hours.index(max(hours)) == 19 and hours.index(min(hours)) == 7


def test_rules_and_budgets_are_chosen_against_the_rate() -> None:
    rules = {r["name"]: r for r in demo_rules("demo-project", 1)}
    peak = rates.expected_per_hour(MIDNIGHT + timedelta(hours=19))
    # Even if every arrival of the busiest hour were an error of one issue, the busy-issue rule stays quiet.
    assert 1.5 * (peak.visits + peak.page_loads) < BUSY_ISSUE_EVENTS
    day = rates.expected_between(MIDNIGHT, MIDNIGHT + timedelta(days=1))
    page_load_rule = next(r for r in rules.values() if r.get("metric") == "load_time_ms")
    assert page_load_rule["window"] == "1d" and page_load_rule["min_samples"] < 0.6 * day.page_loads
    error_rule = next(r for r in rules.values() if r["type"] == "error_rate")
    # A day's transactions: every page load, and at least one shop request per visit.
    assert error_rule["window"] == "1d" and error_rule["min_samples"] < 0.6 * (day.page_loads + day.visits)
    budgets = {(b.metric, b.scope): b for b in DEMO_BUDGETS}
    inp = budgets[("inp_ms", "/cart")]
    # INP comes from Chromium only (a third of the browsers) and the cart is one page of five.
    inp_per_window = day.page_loads * inp.window_days / 5 / 3
    assert inp.min_samples > 2.5 * inp_per_window, "the cart's INP budget waits for data"
    lcp = budgets[("lcp_ms", "*")]
    assert lcp.min_samples < 0.1 * day.page_loads * lcp.window_days * 2 / 3  # Chrome and Firefox report LCP
