"""How much traffic the demo shop gets, hour by hour: one daily shape and rate for its history and live.

The backfill replays the past weeks and the live driver carries on from now, and both ask
:func:`expected_per_hour` how many customer visits and browser page loads an hour brings. So the history and
today are one series: a chart of the last 30 days has no spike at its right edge, the last hour is a normal
hour, and an alert rule's 1-hour window sees what an hour of the history held.

The shop sells in Europe and the US east coast (its regions): traffic peaks at 19:00 UTC and is lowest at
07:00 UTC, at a third of the peak. The mean over a day is the rate below: 3 visits and 4 page loads an hour
(72 and 96 a day; 2,520 visits and 3,360 page loads over the 35 days of history). The cost of the history
sets it: each visit is one or two shop requests with real latencies and each page load an ~11 KB
transaction through the shop's tunnel, ~4.5 ms of the shop's CPU per request; at about twice this rate the
backfill took over three minutes on the project's two busy cores. It still gives a budget's 7-day window and a
rule's 1-day window their samples (demo.budgets, demo.alerts). Live, that is a visit or a
page load every eight and a half minutes on average, about every six at the evening peak.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

VISITS_PER_HOUR = 3.0
PAGE_LOADS_PER_HOUR = 4.0
PEAK_HOUR_UTC = 19.0
# The quietest hour's rate over the busiest one's.
NIGHT_OVER_PEAK = 1 / 3
# Amplitude of the daily cosine, so that (1 - A) / (1 + A) is NIGHT_OVER_PEAK and the mean over a day is 1.
_AMPLITUDE = (1 - NIGHT_OVER_PEAK) / (1 + NIGHT_OVER_PEAK)


@dataclass(frozen=True)
class HourlyRate:
    """Expected arrivals per hour."""

    visits: float
    page_loads: float


def daily_shape(at: datetime) -> float:
    """The rate at ``at`` relative to the day's mean (mean 1 over any 24 hours; 0.5 at night, 1.5 at
    19:00)."""
    utc = at.astimezone(UTC)
    hour = utc.hour + utc.minute / 60 + utc.second / 3600
    return 1.0 + _AMPLITUDE * math.cos(2 * math.pi * (hour - PEAK_HOUR_UTC) / 24)


def expected_per_hour(at: datetime, scale: float = 1.0) -> HourlyRate:
    """Visits and page loads an hour around ``at``; ``scale`` multiplies both (tests run a thin demo)."""
    shape = daily_shape(at) * scale
    return HourlyRate(VISITS_PER_HOUR * shape, PAGE_LOADS_PER_HOUR * shape)


def expected_between(start: datetime, end: datetime, scale: float = 1.0) -> HourlyRate:
    """Expected visits and page loads from ``start`` to ``end`` (the rate integrated minute by minute)."""
    visits = loads = 0.0
    at = start
    while at < end:
        step = min(end, at + timedelta(minutes=1))
        rate = expected_per_hour(at + (step - at) / 2, scale)
        hours = (step - at).total_seconds() / 3600
        visits, loads = visits + rate.visits * hours, loads + rate.page_loads * hours
        at = step
    return HourlyRate(visits, loads)


def draw_count(rng: random.Random, expected: float) -> int:
    """A whole count with mean ``expected`` and the least spread: its integer part, plus one with the
    probability of its fraction (a day's total stays within a few of what the rate says)."""
    whole = math.floor(expected)
    return whole + (1 if rng.random() < expected - whole else 0)


def next_arrival(rng: random.Random, at: datetime, per_hour: float) -> datetime:
    """When the next arrival after ``at`` comes, for a Poisson process of ``per_hour`` arrivals an hour."""
    return at + timedelta(hours=rng.expovariate(per_hour)) if per_hour > 0 else at + timedelta(hours=1)
