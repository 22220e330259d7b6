"""When visitors arrive (demo/arrivals.py): live traffic follows the history's rate hour by hour, and a
history day always has page loads, even thinned."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

from demo import rates
from demo.arrivals import Arrival, arrivals, live_arrivals
from demo.delivery import PAGE_LOADS, VISITS

MIDNIGHT = datetime(2026, 11, 2, tzinfo=UTC)


def _by_hour(arrivals: list[Arrival], kind: str) -> Counter[int]:
    return Counter(a.at.hour for a in arrivals if a.kind == kind)


def test_live_traffic_follows_the_history_s_rate_hour_by_hour() -> None:
    days = 30
    start, end = MIDNIGHT, MIDNIGHT + timedelta(days=days)
    history = arrivals(random.Random(1), start, end)
    live: list[Arrival] = []
    for arrival in live_arrivals(random.Random(2), start):
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
        loads = [a for a in arrivals(rng, day, day + timedelta(days=1), 0.12) if a.kind == PAGE_LOADS]
        assert 5 <= len(loads) <= 18, (day, len(loads))
