"""What an anomaly rule judges in an evaluation tick (docs/alerts.md, "Anomaly rules"): the last
:data:`REPLAY_HOURS` complete hours replayed through the same model and hysteresis as the backtest, so the
live state is the backtest's state at that hour. The tick notifies on the change of that state: into firing
(once per firing), out of it (resolved)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from stacklens.anomalies.backtest import BandPoint, Judged, judge, point, releases_near
from stacklens.anomalies.rule_fields import AnomalyFields, stored_fields
from stacklens.anomalies.series import HOUR, hour_floor, hourly

# The hours replayed each tick: a firing's start and its resolution (two buckets back inside) are found
# within them, and a day is enough to carry a firing through a gap of a few hours.
REPLAY_HOURS = 24


@dataclass(frozen=True)
class AnomalyReading:
    """A rule's series now: its last complete hour (``latest``: value, expected, band, score), whether the
    replay ends firing, the bucket where that firing started (``fired``) and the releases first seen near
    it, the seasonality used and whether the last hour is still learning."""

    fields: AnomalyFields
    bucket: datetime  # the start of the last complete hour
    latest: BandPoint
    count: float
    firing: bool
    learning: bool
    seasonality: str
    fired: BandPoint | None
    fired_at: datetime | None
    releases: tuple[str, ...]
    history_hours: int  # hours with data in the rule's history


def rule_fields(rule: Any) -> AnomalyFields:
    return stored_fields(rule.metric, rule.statistic, rule.scope, rule.filters or {}, rule.min_samples)


def judged_day(client: Any, rule: Any, now: datetime) -> Judged:
    """The rule's last :data:`REPLAY_HOURS` complete hours judged (one query for its series): what the tick
    decides on and what the ``anomaly_bands`` asset keeps."""
    fields = rule_fields(rule)
    until = hour_floor(now)
    series = hourly(
        client,
        rule.org_id,
        rule.project_id,
        fields,
        rule.environment,
        until - timedelta(seconds=rule.window_seconds) - REPLAY_HOURS * HOUR,
        until,
    )
    return judge(series, fields, max(0, len(series.values) - REPLAY_HOURS))


def read(client: Any, rule: Any, now: datetime) -> AnomalyReading:
    """One rule's reading at ``now`` (one query for its series, one for releases when it fires)."""
    fields = rule_fields(rule)
    until = hour_floor(now)
    judged = judged_day(client, rule, now)
    series, offset = judged.series, judged.offset
    last = len(series.values) - offset - 1
    latest = point(judged, last)
    firing = bool(judged.replay.firing[0, last]) if last >= 0 else False
    fired: BandPoint | None = None
    fired_at: datetime | None = None
    releases: tuple[str, ...] = ()
    starts = np.flatnonzero(judged.replay.starts[0])
    if firing and len(starts):
        j = int(starts[-1])
        fired, fired_at = point(judged, j), series.time(offset + j)
        releases = tuple(releases_near(client, rule.org_id, rule.project_id, fired_at, rule.environment))
    return AnomalyReading(
        fields,
        until - HOUR,
        latest,
        float(series.counts[-1]) if len(series.counts) else 0.0,
        firing,
        bool(judged.bands.learning[0, last]) if last >= 0 else True,
        judged.seasonality(last) if last >= 0 else "learning",
        fired,
        fired_at,
        releases,
        int(np.sum(~np.isnan(series.values))),
    )
