"""The periods that tile a window of the session states cover it exactly, each minute once: minutes at the
partial edge hours, whole hours, and whole days as aligned blocks (or single days, or none for hourly
charts)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from stacklens.releases.periods import BLOCKS, EPOCH, tile

LENGTH = {"minute": 1, "hour": 60, "day": 1440, **{f"days_{d}": d * 1440 for d in BLOCKS if d > 1}}


def _minutes(periods: list[tuple[str, datetime]]) -> list[datetime]:
    out = []
    for grain, start in periods:
        out.extend(start + timedelta(minutes=i) for i in range(LENGTH[grain]))
    return sorted(out)


def test_every_window_is_covered_exactly_once() -> None:
    rng = random.Random(2)
    base = datetime(2026, 11, 20, tzinfo=UTC)
    for _ in range(60):
        since = base - timedelta(minutes=rng.randint(0, 90 * 1440))
        until = since + timedelta(minutes=rng.randint(1, 12 * 1440))
        want = [since + timedelta(minutes=i) for i in range(int((until - since).total_seconds() // 60))]
        for blocks, whole in (
            (True, timedelta(days=1)),
            (False, timedelta(days=1)),
            (False, timedelta(hours=1)),
        ):
            periods = tile(since, until, blocks=blocks, whole=whole)
            assert _minutes(periods) == want, (since, until, blocks, whole)
            for grain, start in periods:
                if grain.startswith("days_"):
                    assert blocks and (start - EPOCH).days % int(grain[5:]) == 0
                if grain == "day":
                    assert whole == timedelta(days=1) and start.hour == start.minute == 0
                if grain == "hour":
                    assert start.minute == 0
    # A 30-day window: a few blocks, not 30 days; an hourly chart has no day at all.
    month = tile(base - timedelta(days=30, minutes=7), base - timedelta(minutes=3))
    assert sum(1 for g, _ in month if g.startswith("day")) <= 8
    assert all(
        g in ("hour", "minute") for g, _ in tile(base - timedelta(days=2), base, whole=timedelta(hours=1))
    )
