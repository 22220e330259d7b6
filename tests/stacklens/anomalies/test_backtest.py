"""Judging a series (the backtest's and the tick's core): a new issue's first hour is excused when, without
its events, the hour would be inside the band; the points carry null for gaps and learning hours."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from stacklens.anomalies.backtest import judge, point
from stacklens.anomalies.rule_fields import anomaly_fields
from stacklens.anomalies.series import HourlySeries

START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday


def _series(burst: float, new_issue_events: float) -> HourlySeries:
    rng = np.random.default_rng(2)
    values = rng.poisson(40, 10 * 24).astype(float)
    values[100:103] = np.nan  # a gap
    values[-1] += burst
    new = np.zeros(len(values))
    new[-1] = new_issue_events
    return HourlySeries(START, values, values.copy(), new)


def test_a_new_issues_first_hour_never_fires_but_a_burst_of_known_errors_does() -> None:
    fields = anomaly_fields({"metric": "events", "seasonality": "daily"})
    known = judge(_series(300, 0), fields, 24)
    assert known.replay.starts[0, -1]
    new = judge(_series(300, 300), fields, 24)  # the same hour, all of the burst a new issue's
    assert not new.replay.starts.any()
    both = judge(_series(600, 300), fields, 24)  # a new issue and a burst of known errors besides
    assert both.replay.starts[0, -1]


def test_points_are_null_in_gaps_and_while_learning() -> None:
    fields = anomaly_fields({"metric": "events", "seasonality": "daily"})
    judged = judge(_series(0, 0), fields, 0)
    first, gap = point(judged, 0), point(judged, 101)
    assert first["time"] == "2026-11-02T00:00:00Z" and first["expected"] is None and first["score"] is None
    assert gap["value"] is None and gap["score"] is None
    later = point(judged, 9 * 24)
    assert later["lower"] < later["expected"] < later["upper"] and later["value"] is not None
    assert judged.seasonality(9 * 24) == "daily" and judged.seasonality(0) == "learning"
