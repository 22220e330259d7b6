"""One daily shape and rate for the demo's history and its live traffic: both draw from
``rates.expected_per_hour``, so an hour of live traffic looks like the same hour of any history day; the
demo's alert rules and budgets are chosen against that rate."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

from demo import rates, traffic
from demo.alerts import BUSY_ISSUE_EVENTS, demo_rules
from demo.budgets import DEMO_BUDGETS
from demo.delivery import PAGE_LOADS, VISITS

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


def _by_hour(arrivals: list[traffic.Arrival], kind: str) -> Counter[int]:
    return Counter(a.at.hour for a in arrivals if a.kind == kind)


def test_live_traffic_follows_the_history_s_rate_hour_by_hour() -> None:
    days = 30
    start, end = MIDNIGHT, MIDNIGHT + timedelta(days=days)
    history = traffic.arrivals(random.Random(1), start, end)
    live: list[traffic.Arrival] = []
    for arrival in traffic.live_arrivals(random.Random(2), start):
        if arrival.at >= end:
            break
        live.append(arrival)
    for kind, per_hour in ((VISITS, rates.VISITS_PER_HOUR), (PAGE_LOADS, rates.PAGE_LOADS_PER_HOUR)):
        expected_total = days * 24 * per_hour
        for name, drawn in (("history", history), ("live", live)):
            total = sum(1 for a in drawn if a.kind == kind)
            assert abs(total - expected_total) < 4 * expected_total**0.5, (name, kind, total)
        # Evening (17-21 h) against early morning (5-9 h): 1.45 / 0.55 of the mean, for both.
        for name, drawn in (("history", history), ("live", live)):
            hours = _by_hour(drawn, kind)
            evening = sum(hours[h] for h in range(17, 22))
            morning = sum(hours[h] for h in range(5, 10))
            assert 2.0 < evening / morning < 3.6, (name, kind, evening, morning)
        # Hour by hour, live and history agree within what chance allows (Poisson, 5 standard deviations).
        live_hours, history_hours = _by_hour(live, kind), _by_hour(history, kind)
        for hour in range(24):
            rate = rates.expected_per_hour(MIDNIGHT + timedelta(hours=hour, minutes=30))
            expected = days * (rate.visits if kind == VISITS else rate.page_loads)
            spread = 5 * (2 * expected) ** 0.5
            assert abs(live_hours[hour] - history_hours[hour]) < spread, (kind, hour)


def test_a_history_day_is_never_without_page_loads_even_thinned() -> None:
    # The backfill draws each hour's count around its expectation (rates.draw_count), not a free Poisson
    # count: a day at an eighth of the rate still has page loads.
    rng = random.Random(3)
    for offset in range(60):
        day = MIDNIGHT - timedelta(days=offset)
        loads = [a for a in traffic.arrivals(rng, day, day + timedelta(days=1), 0.12) if a.kind == PAGE_LOADS]
        assert 5 <= len(loads) <= 18, (day, len(loads))


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
