"""The hourly series an anomaly rule watches, read where the pages read the same metric:

- the catalog's performance metrics from the states the performance views, budgets and threshold rules read
  (:func:`stacklens.performance.window_series.series`, each hour a one-hour window), samples the page loads
  or calls of the hour;
- ``events`` and ``users``: the project's (or one issue's) error events per hour and the distinct users they
  hit, as Explore's errors dataset counts them; an hour without events after the first is 0, the hours before
  the first are a gap;
- ``crash_free_sessions``: the session states' hour rows (the release pages' figures), samples the sessions;
- ``uptime_pct``: the uptime probes (ok / all, as the monitor pages count them), samples the probes.

An hour without samples is a gap (NaN), never 0 — except for counts, where no event is a count of 0."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from numpy.typing import NDArray

from stacklens.anomalies.rule_fields import COUNTED, SESSIONS, AnomalyFields
from stacklens.performance.window_series import series as window_series
from stacklens.performance.window_values import SOURCES, WindowRequest
from stacklens.warehouse.queries import run_query

HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class HourlySeries:
    """Buckets ``start + i hours``: the value (NaN: a gap), the samples it holds, and the events of issues
    first seen in that hour (a new issue's first hour: the new-issue rule owns it, so they never make an
    anomaly)."""

    start: datetime
    values: NDArray[np.float64]
    counts: NDArray[np.float64]
    new_issue_events: NDArray[np.float64]

    def time(self, index: int) -> datetime:
        return self.start + index * HOUR


def hour_floor(at: datetime) -> datetime:
    at = at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)
    return at.replace(minute=0, second=0, microsecond=0)


def _naive(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(tzinfo=None)


def hourly(
    client: Any,
    org_id: int,
    project_id: int,
    fields: AnomalyFields,
    environment: str,
    since: datetime,
    until: datetime,
) -> HourlySeries:
    """The rule's hourly series over ``[since, until)`` (both whole hours, UTC)."""
    since, until = hour_floor(since), hour_floor(until)
    n = max(0, int((until - since) / HOUR))
    values, counts = np.full(n, np.nan), np.zeros(n)
    new_events = np.zeros(n)
    if n == 0:
        return HourlySeries(since, values, counts, new_events)
    if fields.metric in SOURCES:
        request = WindowRequest(project_id, fields.metric, fields.statistic, fields.scope, HOUR, environment)
        points = [since + (i + 1) * HOUR for i in range(n)]
        for i, (_, value, samples) in enumerate(window_series(client, request, points)):
            counts[i] = samples
            values[i] = np.nan if value is None or samples == 0 else value
        return HourlySeries(since, values, counts, new_events)
    base = {"org_id": org_id, "project_id": project_id, "since": _naive(since), "until": _naive(until)}
    if fields.metric in COUNTED:
        counted = {
            **base,
            "environment": environment,
            "issue_id": int(fields.scope) if fields.scope != "*" else 0,
        }
        # Users need a distinct count, events a count only: two queries, so an events rule skips the former.
        name = "anomalies/error_users_hourly" if fields.metric == "users" else "anomalies/error_events_hourly"
        rows = run_query(client, name, counted)
        for row in run_query(client, "anomalies/new_issue_hours", counted):
            i = _index(row["hour"], since)
            if 0 <= i < n:
                new_events[i] = float(row["new_issue_events"])
        for row in rows:
            i = _index(row["hour"], since)
            if 0 <= i < n:
                values[i] = float(row[fields.metric])
                counts[i] = float(row["events"])
        if rows:  # after the first event, an hour without events is a count of 0
            first = min(_index(r["hour"], since) for r in rows)
            gap = np.isnan(values)
            gap[: max(first, 0)] = False
            values[gap] = 0.0
        return HourlySeries(since, values, counts, new_events)
    if fields.metric == SESSIONS:
        for row in run_query(client, "anomalies/crash_free_hourly", {**base, "environment": environment}):
            i, sessions = _index(row["hour"], since), float(row["sessions"])
            if 0 <= i < n and sessions > 0:
                values[i] = 100.0 * (1.0 - float(row["crashed"]) / sessions)
                counts[i] = sessions
        return HourlySeries(since, values, counts, new_events)
    for row in run_query(client, "anomalies/uptime_hourly", {**base, "monitor": fields.scope}):
        i, probes = _index(row["hour"], since), float(row["probes"])
        if 0 <= i < n and probes > 0:
            values[i] = 100.0 * float(row["ok"]) / probes
            counts[i] = probes
    return HourlySeries(since, values, counts, new_events)


def _index(hour: datetime, since: datetime) -> int:
    hour = hour.replace(tzinfo=UTC) if hour.tzinfo is None else hour
    return int((hour - since) / HOUR)
