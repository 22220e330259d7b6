"""When the demo's visitors arrive: visits and page loads hour by hour as :mod:`demo.rates` says, each at a
random moment of its hour, for a past window (the backfill) or from now on (live traffic)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from demo import rates
from demo.delivery import (
    PAGE_LOADS,
    VISITS,
)


@dataclass(frozen=True)
class Arrival:
    at: datetime
    kind: str  # VISITS or PAGE_LOADS


def arrivals(rng: random.Random, start: datetime, end: datetime, scale: float = 1.0) -> list[Arrival]:
    """The visits and page loads from ``start`` to ``end``, hour by hour as :mod:`demo.rates`
    says, each at a random moment of its hour, in time order."""
    out: list[Arrival] = []
    at = start
    while at < end:
        step = min(end, at.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1))
        expected = rates.expected_between(at, step, scale)
        seconds = (step - at).total_seconds()
        for kind, mean in ((VISITS, expected.visits), (PAGE_LOADS, expected.page_loads)):
            out.extend(
                Arrival(at + timedelta(seconds=rng.uniform(0, seconds)), kind)
                for _ in range(rates.draw_count(rng, mean))
            )
        at = step
    return sorted(out, key=lambda a: a.at)


def live_arrivals(rng: random.Random, start: datetime, scale: float = 1.0) -> Iterator[Arrival]:
    """Live visits and page loads from ``start`` on, in time order: two Poisson processes whose rate at each
    moment is :func:`demo.rates.expected_per_hour`, the function the history is drawn from."""
    first = rates.expected_per_hour(start, scale)
    upcoming = {
        VISITS: rates.next_arrival(rng, start, first.visits),
        PAGE_LOADS: rates.next_arrival(rng, start, first.page_loads),
    }
    while True:
        kind = min(upcoming, key=lambda k: upcoming[k])
        at = upcoming[kind]
        rate = rates.expected_per_hour(at, scale)
        upcoming[kind] = rates.next_arrival(rng, at, rate.visits if kind == VISITS else rate.page_loads)
        yield Arrival(at, kind)
