"""What a rule would have done over the past 30 days: the live evaluator run over history.

A threshold rule is evaluated at every hour of the past 30 days (every 6 hours for windows over a day) and at
``now``, each time as the live tick evaluates it — the same states and window
(:mod:`stacklens.alerts.measures`, :mod:`stacklens.performance.window_values`), the same minimum samples,
warning and critical thresholds and hysteresis (:func:`stacklens.alerts.state.decide`, the rule's
:func:`~stacklens.alerts.transitions.thresholds`). The last evaluation *is* the live one
(:func:`~stacklens.alerts.measures.measure` at ``now``). What the preview holds is what the evaluator saw:
each evaluation's value, samples and state; the runs of one state as bands; and the firings, which are the
firing bands — so the count, the bands and the line agree by construction.

New-issue and regression rules show how many notifications each day would have brought. A crash-free rate
rule is replayed like the threshold rules, each evaluation on the release that was the newest at its time.
A release regression rule is replayed once a day (each midnight UTC of the past 30 days, and now): the
verdict of the then newest release over the rule's window, as the release pages would have shown it,
notifying once per release."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.alerts.issue_measures import filter_sql
from stacklens.alerts.measures import measure, window_request
from stacklens.alerts.release_measures import crash_free_history, newest_verdict
from stacklens.alerts.state import decide
from stacklens.alerts.transitions import thresholds
from stacklens.control.models.alerts import AlertRule
from stacklens.performance.window_series import series
from stacklens.performance.window_values import WindowRequest
from stacklens.warehouse.queries import load_query

DAYS = 30
MAX_ISSUES = 200  # event-frequency preview: the busiest issues only
# The states a band shows: "resolved" is ok again (it differs only in the message it sends).
BAND_STATES = ("ok", "warning", "firing", "insufficient_data")
SEVERITY = {"insufficient_data": 0, "ok": 1, "warning": 2, "firing": 3}


@dataclass(frozen=True)
class Step:
    """One evaluation of the replay: when, what it measured, and the state it left the rule in."""

    at: datetime
    value: float | None
    samples: int
    state: str  # one of BAND_STATES


@dataclass(frozen=True)
class Band:
    """A run of evaluations in one state, from halfway to the evaluation before it to halfway to the one after
    (the first and last evaluations close the chart): every evaluation lies inside its own band."""

    start: datetime
    end: datetime
    state: str
    first: int  # index of its first and last evaluation in Preview.steps
    last: int


@dataclass
class Preview:
    steps: list[Step] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    # Each firing: its first firing evaluation, the first evaluation after it that was not firing (None:
    # firing at the end) and the worst value it saw (the highest; the lowest for a rule that fires below).
    periods: list[tuple[datetime, datetime | None, float]] = field(default_factory=list)
    daily: list[tuple[str, int]] = field(default_factory=list)  # occurrence rules: (day, notifications)
    note: str = ""
    scope: str = ""

    @property
    def points(self) -> list[tuple[datetime, float | None, int]]:
        return [(s.at, s.value, s.samples) for s in self.steps]

    @property
    def notifications(self) -> int:
        return len(self.periods) + sum(n for _, n in self.daily)


def evaluation_times(now: datetime, window_s: int) -> list[datetime]:
    """The replay's evaluations: every whole hour (6 hours for windows over a day) of the past 30 days before
    ``now``, then ``now`` itself (the live evaluation)."""
    step = timedelta(hours=1 if window_s <= 86400 else 6)
    now = _utc(now)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    last = epoch + step * ((now - epoch) // step)
    if last == now:
        last -= step
    count = int(timedelta(days=DAYS) / step)
    return [last - step * i for i in range(count - 1, -1, -1)] + [now]


def replay(rule: AlertRule, points: list[tuple[datetime, float | None, int]]) -> Preview:
    """The state machine over ``points`` (at, value, samples), from insufficient data, as the live tick
    runs it."""
    out = Preview(scope=rule.scope or "*")
    state, t = "insufficient_data", thresholds(rule)
    for at, value, samples in points:
        state = decide(state, value, samples, t).state
        out.steps.append(Step(at, value, samples, "ok" if state == "resolved" else state))
    out.bands = bands(out.steps)
    for band in out.bands:
        if band.state == "firing":
            after = out.steps[band.last + 1].at if band.last + 1 < len(out.steps) else None
            seen = [s.value or 0.0 for s in out.steps[band.first : band.last + 1]]
            peak = min(seen) if t.below else max(seen)  # the worst value: the lowest for a crash-free rate
            out.periods.append((out.steps[band.first].at, after, peak))
    return out


def bands(steps: list[Step]) -> list[Band]:
    """The runs of one state among ``steps``, each reaching halfway to its neighbours."""
    out: list[Band] = []
    first = 0
    for i in range(1, len(steps) + 1):
        if i < len(steps) and steps[i].state == steps[first].state:
            continue
        start = (
            steps[first].at
            if first == 0
            else steps[first - 1].at + (steps[first].at - steps[first - 1].at) / 2
        )
        last = i - 1
        end = steps[last].at if i == len(steps) else steps[last].at + (steps[i].at - steps[last].at) / 2
        out.append(Band(start, end, steps[first].state, first, last))
        first = i
    return out


def preview(client: Any, rule: AlertRule, now: datetime | None = None) -> Preview:
    now = _utc(now or datetime.now(UTC))
    since = now - timedelta(days=DAYS)
    times = evaluation_times(now, rule.window_seconds)
    if rule.type in ("performance_budget", "error_rate"):
        request = window_request(rule) if rule.type == "performance_budget" else _error_request(rule)
        past = series(client, request, times[:-1])
        (live,) = measure(client, [rule], now)[rule.id]
        return replay(rule, [*past, (now, live.value, live.samples)])
    if rule.type == "crash_free_rate":
        history = crash_free_history(client, rule, times[:-1])
        (live,) = measure(client, [rule], now)[rule.id]
        out = replay(
            rule, [(at, value, n) for at, value, n, _ in history] + [(now, live.value, live.samples)]
        )
        out.scope = "the newest release"
        return out
    if rule.type == "release_regression":
        return _release_verdicts(client, rule, now)
    if rule.type == "event_frequency":
        return _frequency(client, rule, times[:-1], since)
    if rule.type == "new_issue":
        rows = client.query(
            load_query("alerts/new_issues_daily"), parameters={"project_id": rule.project_id, "since": since}
        ).result_rows
        return Preview(
            daily=[(str(d), int(n)) for d, n in rows], note="Filters are not applied to this preview."
        )
    filters, extra = filter_sql(rule, ("release",), prefix="h.")
    rows = client.query(
        load_query("alerts/regressions").replace("{filters}", filters),
        parameters={"project_ids": [rule.project_id], "since": since, **extra},
    ).result_rows
    daily: dict[str, int] = defaultdict(int)
    for _, _, at, _, _ in rows:
        daily[str(at.date())] += 1
    return Preview(daily=sorted(daily.items()))


def _release_verdicts(client: Any, rule: AlertRule, now: datetime) -> Preview:
    """The verdict of the newest release at each midnight of the past 30 days and now: a day counts one
    notification for each release first judged a regression on it (once per release, as the live rule)."""
    days = [
        now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=d)
        for d in range(DAYS - 1, -1, -1)
    ]
    window = timedelta(seconds=rule.window_seconds)
    told: dict[str, datetime] = {}
    for at in [*days, now]:
        verdict = newest_verdict(client, rule.org_id, rule.project_id, window, rule.environment, at)
        if verdict is not None and verdict.regression and verdict.release not in told:
            told[verdict.release] = at
    daily: dict[str, int] = defaultdict(int)
    for at in told.values():
        daily[str(at.date())] += 1
    named = ", ".join(f"{release} ({at:%Y-%m-%d})" for release, at in told.items())
    note = "Evaluated once a day (at midnight UTC) and now: a verdict that held only between two of those is not seen."
    return Preview(
        daily=sorted(daily.items()),
        note=f"Would have notified for {named}. {note}" if told else note,
        scope="the newest release",
    )


def _error_request(rule: AlertRule) -> WindowRequest:
    """An ``error_rate`` rule's figure as a window: the catalog's failed_transactions_pct of every
    transaction of the project, with the rule's environment and release (what queries/alerts/error_rate.sql
    counts)."""
    return WindowRequest(
        rule.project_id,
        "failed_transactions_pct",
        "avg",
        "*",
        timedelta(seconds=rule.window_seconds),
        rule.environment,
        str((rule.filters or {}).get("release", "")),
    )


def _frequency(client: Any, rule: AlertRule, points: list[datetime], since: datetime) -> Preview:
    """Each busy issue replayed on its own (a rule fires per issue); the line is the busiest issue at each
    evaluation and its state the most severe of the issues'."""
    filters, extra = filter_sql(rule, ("environment", "release", "level", "tag"))
    rows = client.query(
        load_query("alerts/hourly_issue_counts").replace("{filters}", filters),
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
    states = ["ok"] * len(points)
    busiest = [0.0] * len(points)
    for counts in per_issue.values():
        series_: list[tuple[datetime, float | None, int]] = [
            (at, float(sum(counts.get(at - timedelta(hours=h + 1), 0) for h in range(hours))), 1)
            for at in points
        ]
        issue = replay(rule, series_)
        out.periods += issue.periods
        for i, step in enumerate(issue.steps):
            busiest[i] = max(busiest[i], step.value or 0.0)
            states[i] = max(states[i], step.state, key=SEVERITY.__getitem__)
    out.steps = [Step(at, busiest[i], 1, states[i]) for i, at in enumerate(points)]
    out.bands = bands(out.steps)
    out.periods.sort(key=lambda p: p[0])
    out.scope = "each issue"
    return out


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
