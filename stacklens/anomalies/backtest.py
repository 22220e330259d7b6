"""What an anomaly rule would have done over the past days (``POST /api/alerts/rules/backtest``, the rule
form) and what it judges now (the evaluation tick): its hourly series (:mod:`.series`), the expectation and
band of each bucket (:mod:`.model`) and its firings (:mod:`.decide`), with the releases first seen near each
firing. The backtest is the live evaluation replayed: the same series, model, band and hysteresis."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.anomalies.decide import Replay, outside, replay
from stacklens.anomalies.model import SEASONALITY_CODES, Bands, bands
from stacklens.anomalies.rule_fields import AnomalyFields
from stacklens.anomalies.series import HOUR, HourlySeries, hour_floor, hourly
from stacklens.markers import release_markers

# A release "deployed nearby": first seen in the 6 hours before a firing bucket, or during it.
RELEASES_BEFORE = timedelta(hours=6)


class BandPoint(TypedDict):
    """One hourly bucket: its start (UTC), value, expected value, band and score (null: a gap or learning)."""

    time: str
    value: float | None
    expected: float | None
    lower: float | None
    upper: float | None
    score: float | None


class Firing(BandPoint):
    """A bucket where a firing started, with the seasonality used and the releases first seen near it."""

    releases: list[str]
    seasonality: str


class BacktestAnswer(TypedDict):
    points: list[BandPoint]
    fires: list[Firing]


@dataclass(frozen=True)
class Judged:
    """A series judged from bucket ``offset`` on: bands and replay cover buckets ``offset…`` of ``series``."""

    series: HourlySeries
    bands: Bands
    replay: Replay
    offset: int

    def seasonality(self, j: int) -> str:
        code = int(self.bands.seasonality[0, j])
        return SEASONALITY_CODES[code] if code >= 0 else "learning"


def judge(
    series: HourlySeries,
    fields: AnomalyFields,
    offset: int,
    firing_before: bool = False,
    inside_before: int = 0,
) -> Judged:
    """Bands and firings of ``series`` from bucket ``offset``; a live rule carries its state in."""
    got = bands(series.values[None, :], fields.seasonality, fields.k, fields.counts, offset)
    # A new issue's first hour never fires: a bucket is excused when, without the new issues' events, it
    # would be inside the band.
    new = series.new_issue_events[None, offset:]
    with np.errstate(invalid="ignore", divide="ignore"):
        without_new = got.score - new / got.spread
    excused = (new > 0) & ~outside(without_new, fields.k, fields.direction)
    steps = replay(
        got.score,
        series.counts[None, offset:],
        fields.k,
        fields.direction,
        fields.min_count,
        excused,
        np.array([firing_before]),
        np.array([inside_before], dtype=np.int64),
    )
    return Judged(series, got, steps, offset)


def _num(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 6)


def point(judged: Judged, j: int) -> BandPoint:
    b, i = judged.bands, judged.offset + j
    return {
        "time": judged.series.time(i).isoformat().replace("+00:00", "Z"),
        "value": _num(judged.series.values[i]),
        "expected": _num(b.expected[0, j]),
        "lower": _num(b.lower[0, j]),
        "upper": _num(b.upper[0, j]),
        "score": _num(b.score[0, j]),
    }


def releases_near(
    client: Any, org_id: int, project_id: int, at: datetime, environment: str = ""
) -> list[str]:
    """The releases of the project first seen in the 6 hours before the bucket starting ``at``, or in it."""
    found = release_markers(client, org_id, {project_id: ""}, at - RELEASES_BEFORE, at + HOUR, environment)
    return [m.release for m in found]


def backtest(
    client: Any,
    org_id: int,
    project_id: int,
    fields: AnomalyFields,
    environment: str,
    days: int,
    history_seconds: int,
    now: datetime,
) -> BacktestAnswer:
    """The last ``days`` of complete hours before ``now``: every bucket's value, expected value, band and
    score, and the buckets where a firing would have started."""
    until = hour_floor(now)
    first = until - timedelta(days=days)
    series = hourly(
        client, org_id, project_id, fields, environment, first - timedelta(seconds=history_seconds), until
    )
    offset = int((first - series.start) / HOUR)
    judged = judge(series, fields, offset)
    points = [point(judged, j) for j in range(len(series.values) - offset)]
    fires: list[Firing] = []
    starts = np.flatnonzero(judged.replay.starts[0])
    near = _releases(client, org_id, project_id, [series.time(offset + int(j)) for j in starts], environment)
    for j in starts:
        at = series.time(offset + int(j))
        fires.append(
            {**point(judged, int(j)), "releases": near.get(at, []), "seasonality": judged.seasonality(int(j))}
        )
    return {"points": points, "fires": fires}


def _releases(
    client: Any, org_id: int, project_id: int, times: list[datetime], environment: str
) -> dict[datetime, list[str]]:
    """Releases near each firing time, in one query over their span."""
    if not times:
        return {}
    markers = release_markers(
        client, org_id, {project_id: ""}, min(times) - RELEASES_BEFORE, max(times) + HOUR, environment
    )
    return {t: [m.release for m in markers if t - RELEASES_BEFORE <= m.time < t + HOUR] for t in times}
