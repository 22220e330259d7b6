"""When a rule would have fired over the past 30 days: the measured series and the firing periods.

Threshold rules are replayed through the same state machine as the live evaluation (warning, hysteresis,
minimum samples), evaluated every hour (every 6 hours for windows over a day) with the rule's window.
New-issue and regression rules show how many notifications each day would have brought.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.alerts.evaluation import thresholds
from stacklens.alerts.issue_measures import filter_sql
from stacklens.alerts.measures import REGRESSIONS
from stacklens.alerts.state import decide
from stacklens.control.alert_models import AlertRule
from stacklens.performance.metric_window import WindowRequest, series

DAYS = 30
MAX_ISSUES = 200  # event-frequency preview: the busiest issues only


@dataclass
class Preview:
    points: list[tuple[datetime, float | None, int]] = field(default_factory=list)
    periods: list[tuple[datetime, datetime | None, float]] = field(default_factory=list)  # start, end, peak
    daily: list[tuple[str, int]] = field(default_factory=list)  # occurrence rules: (day, notifications)
    note: str = ""

    @property
    def notifications(self) -> int:
        return len(self.periods) + sum(n for _, n in self.daily)


ERROR_RATE_SERIES = (
    "SELECT point, count(), countIf(status NOT IN ('ok', 'cancelled', 'unknown', '') OR http_status >= 500)"
    " FROM transactions ARRAY JOIN arrayFilter(p -> timestamp < p AND timestamp >= p - {window_s:UInt32},"
    " {points:Array(DateTime('UTC'))}) AS point WHERE project_id = {project_id:UInt64}"
    " AND timestamp >= {since:DateTime64(3, 'UTC')} {filters} GROUP BY point ORDER BY point"
)
HOURLY_ISSUE_COUNTS = (
    "SELECT issue_id, toStartOfHour(timestamp) AS hour, count(), uniqExact(user_key) FROM events"
    " WHERE project_id = {project_id:UInt64} AND timestamp >= {since:DateTime64(3, 'UTC')} {filters}"
    " AND issue_id IN (SELECT issue_id FROM events WHERE project_id = {project_id:UInt64}"
    "  AND timestamp >= {since:DateTime64(3, 'UTC')} {filters} GROUP BY issue_id ORDER BY count() DESC"
    "  LIMIT {max_issues:UInt32}) GROUP BY issue_id, hour"
)
NEW_ISSUES_DAILY = (
    "SELECT toDate(first) AS day, count() FROM (SELECT issue_id, min(first_seen) AS first FROM issue_live_counters"
    " WHERE project_id = {project_id:UInt64} GROUP BY issue_id HAVING first >= {since:DateTime64(3, 'UTC')})"
    " GROUP BY day ORDER BY day"
)


def _points(now: datetime, window_s: int) -> tuple[list[datetime], timedelta]:
    step = timedelta(hours=1 if window_s <= 86400 else 6)
    end = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    count = int(timedelta(days=DAYS) / step)
    return [end - step * i for i in range(count, -1, -1)], step


def replay(rule: AlertRule, points: list[tuple[datetime, float | None, int]]) -> Preview:
    out = Preview(points=points)
    state, peak, started = "insufficient_data", 0.0, None
    t = thresholds(rule)
    for at, value, samples in points:
        d = decide(state, value, samples, t)
        if d.state == "firing" and state != "firing":
            started, peak = at, value or 0.0
        if d.state == "firing":
            peak = max(peak, value or 0.0)
        if state == "firing" and d.state != "firing" and started is not None:
            out.periods.append((started, at, peak))
        state = d.state
    if state == "firing" and started is not None:
        out.periods.append((started, None, peak))
    return out


def preview(client: Any, rule: AlertRule, now: datetime | None = None) -> Preview:
    now = now or datetime.now(UTC)
    since = now - timedelta(days=DAYS)
    points, step = _points(now, rule.window_seconds)
    if rule.type == "performance_budget":
        request = WindowRequest(
            rule.project_id, rule.metric, rule.statistic, rule.scope, timedelta(seconds=rule.window_seconds)
        )
        out = replay(rule, series(client, request, points[0], points[-1], step))
        if rule.environment:
            out.note = "The preview covers every environment (the hourly states keep none)."
        return out
    if rule.type == "error_rate":
        filters, extra = filter_sql(rule, ("environment", "release"))
        rows = client.query(
            ERROR_RATE_SERIES.replace("{filters}", filters),
            parameters={
                "window_s": rule.window_seconds,
                "points": points,
                "project_id": rule.project_id,
                "since": points[0] - timedelta(seconds=rule.window_seconds),
                **extra,
            },
        ).result_rows
        got = {_utc(p): (100.0 * f / n if n else None, int(n)) for p, n, f in rows}
        return replay(rule, [(p, *got.get(p, (None, 0))) for p in points])
    if rule.type == "event_frequency":
        return _frequency(client, rule, points, since)
    if rule.type == "new_issue":
        rows = client.query(
            NEW_ISSUES_DAILY, parameters={"project_id": rule.project_id, "since": since}
        ).result_rows
        return Preview(
            daily=[(str(d), int(n)) for d, n in rows], note="Filters are not applied to this preview."
        )
    filters, extra = filter_sql(rule, ("release",), prefix="h.")
    rows = client.query(
        REGRESSIONS.replace("{filters}", filters),
        parameters={"project_ids": [rule.project_id], "since": since, **extra},
    ).result_rows
    daily: dict[str, int] = defaultdict(int)
    for _, _, at, _, _ in rows:
        daily[str(at.date())] += 1
    return Preview(daily=sorted(daily.items()))


def _frequency(client: Any, rule: AlertRule, points: list[datetime], since: datetime) -> Preview:
    filters, extra = filter_sql(rule, ("environment", "release", "level", "tag"))
    rows = client.query(
        HOURLY_ISSUE_COUNTS.replace("{filters}", filters),
        parameters={
            "project_id": rule.project_id,
            "since": since - timedelta(seconds=rule.window_seconds),
            "max_issues": MAX_ISSUES,
            **extra,
        },
    ).result_rows
    per_issue: dict[int, dict[datetime, int]] = defaultdict(dict)
    for issue_id, hour, events, users in rows:
        per_issue[int(issue_id)][_utc(hour)] = int(users if rule.count_kind == "users" else events)
    hours = max(rule.window_seconds // 3600, 1)
    out = Preview(note="Counted per hour; users are summed over the hours of the window (an upper bound).")
    busiest: list[tuple[datetime, float | None, int]] = []
    for at in points:
        window = [at - timedelta(hours=h + 1) for h in range(hours)]
        best = max((sum(c.get(h, 0) for h in window) for c in per_issue.values()), default=0)
        busiest.append((at, float(best), 1))
    out.points = busiest
    for issue_counts in per_issue.values():
        series_ = [
            (at, float(sum(issue_counts.get(at - timedelta(hours=h + 1), 0) for h in range(hours))), 1)
            for at in points
        ]
        out.periods += replay(rule, series_).periods  # type: ignore[arg-type]
    out.periods.sort(key=lambda p: p[0])
    return out


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
