"""What each rule type measures in the warehouse, for many rules at once.

- ``performance_budget``: :mod:`stacklens.performance.window_values` — the states the performance views read,
  the window in whole minutes as a view cuts it (one query per kind of state for every such rule).
- ``event_frequency``: events (or distinct users) per issue in the window, with the rule's filters.
- ``error_rate`` (the catalog's ``failed_transactions_pct``, "Failed transactions" — not the API error rate
  ``error_pct``): 100 × failed transactions / transactions in the window (failed: a status other than ok,
  cancelled or unknown, or an HTTP status >= 500), with the environment and release filters.
- ``new_issue``: issues whose first event is inside the window and that have an event matching the filters.
- ``regression``: issues the workflow marked ``regressed`` inside the window (``issue_history``).
- ``crash_free_rate`` and ``release_regression``: the newest release's crash-free share, or its verdict
  against the release before it, from release health (:mod:`stacklens.alerts.release_measures`).
- ``anomaly``: the rule's hourly series, its band and its firing replayed over the last day
  (:mod:`stacklens.anomalies.live`), one measurement of the last complete hour.

Rules sharing a type, window and filters share one query over all their projects. Filter values are
server-side parameters; the SQL is composed from the constant fragments below only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from stacklens.alerts import issue_measures, release_measures
from stacklens.alerts.issue_measures import filter_sql
from stacklens.anomalies import live
from stacklens.control.models.alerts import AlertRule
from stacklens.metrics.windows import Window
from stacklens.performance.window_values import WindowRequest, bounds, compute_many
from stacklens.warehouse.queries import load_query


@dataclass(frozen=True)
class Measurement:
    scope_key: str  # "*" for project-wide figures, the issue id for per-issue ones
    value: float | None
    samples: int
    window_start: datetime
    window_end: datetime
    release: str = ""
    title: str = ""
    issue_id: int | None = None
    reasons: tuple[str, ...] = ()  # a release verdict's reasons (metric, both values, both sample sizes)
    anomaly: live.AnomalyReading | None = None  # an anomaly rule's reading: band, score, firing, releases


def window_request(rule: AlertRule) -> WindowRequest:
    """What a performance rule measures: its metric over its window, scope, environment and release filter."""
    return WindowRequest(
        rule.project_id,
        rule.metric,
        rule.statistic,
        rule.scope,
        timedelta(seconds=rule.window_seconds),
        rule.environment,
        str((rule.filters or {}).get("release", "")),
    )


def _group_key(rule: AlertRule) -> tuple[Any, ...]:
    return (rule.type, rule.window_seconds, rule.environment, tuple(sorted((rule.filters or {}).items())))


def measure(client: Any, rules: list[AlertRule], now: datetime) -> dict[int, list[Measurement]]:
    """Rule id → its measurements now."""
    out: dict[int, list[Measurement]] = {r.id: [] for r in rules}
    on_releases = [r for r in rules if r.type in ("crash_free_rate", "release_regression")]
    if on_releases:
        _releases(client, on_releases, now, out)
    for rule in (r for r in rules if r.type == "anomaly"):
        reading = live.read(client, rule, now)
        out[rule.id].append(
            Measurement(
                "*",
                reading.latest["value"],
                int(reading.count),
                reading.bucket,
                reading.bucket + timedelta(hours=1),
                reading.releases[0] if reading.releases else "",
                anomaly=reading,
            )
        )
    perf = [r for r in rules if r.type == "performance_budget"]
    if perf:
        values = compute_many(client, [window_request(r) for r in perf], now)
        releases = dict(
            client.query(
                load_query("alerts/latest_release"),
                parameters={
                    "project_ids": sorted({r.project_id for r in perf}),
                    "since": min(v.since for v in values),
                },
            ).result_rows
        )
        for rule, got in zip(perf, values, strict=True):
            out[rule.id].append(
                Measurement(
                    "*", got.value, got.samples, got.since, got.until, str(releases.get(rule.project_id, ""))
                )
            )
    groups: dict[tuple[Any, ...], list[AlertRule]] = defaultdict(list)
    for rule in rules:
        if rule.type not in ("performance_budget", "crash_free_rate", "release_regression", "anomaly"):
            groups[_group_key(rule)].append(rule)
    by_type: dict[str, list[list[AlertRule]]] = defaultdict(list)
    for group in groups.values():
        by_type[group[0].type].append(group)
    if by_type["event_frequency"]:
        _frequencies(client, by_type["event_frequency"], now, out)
    if by_type["new_issue"]:
        _new_issues(client, by_type["new_issue"], now, out)
    for group in by_type["error_rate"] + by_type["regression"]:
        _measure_group(client, group, now, out)
    return out


def _frequencies(
    client: Any, groups: list[list[AlertRule]], now: datetime, out: dict[int, list[Measurement]]
) -> None:
    for group, by_project in zip(groups, issue_measures.frequencies(client, groups, now), strict=True):
        since, until = _edges(issue_measures.window_of(group[0], now), now)
        for rule in group:
            for issue_id, events, users, release, title in by_project.get(rule.project_id, []):
                value = users if rule.count_kind == "users" else events
                out[rule.id].append(
                    Measurement(str(issue_id), float(value), events, since, until, release, title, issue_id)
                )


def _edges(window: Window, now: datetime) -> tuple[datetime, datetime]:
    """The window's edges, naive when ``now`` was (the evaluation's times are as it gave them)."""
    return window.naive if now.tzinfo is None else (window.since, window.until)


def _new_issues(
    client: Any, groups: list[list[AlertRule]], now: datetime, out: dict[int, list[Measurement]]
) -> None:
    for group, by_project in zip(groups, issue_measures.new_issues(client, groups, now), strict=True):
        since, until = _edges(issue_measures.window_of(group[0], now), now)
        for rule in group:
            for issue_id, title, release in by_project.get(rule.project_id, []):
                out[rule.id].append(
                    Measurement(str(issue_id), 1.0, 1, since, until, release, title, issue_id)
                )


def _measure_group(
    client: Any, group: list[AlertRule], now: datetime, out: dict[int, list[Measurement]]
) -> None:
    first = group[0]
    since, until = now - timedelta(seconds=first.window_seconds), now
    if first.type == "error_rate":  # a threshold's window: whole minutes, as every window is evaluated
        since, until = bounds(now, timedelta(seconds=first.window_seconds))
    params: dict[str, Any] = {
        "project_ids": sorted({r.project_id for r in group}),
        "since": since,
        "until": until,
    }
    by_project: dict[int, list[Measurement]] = defaultdict(list)
    if first.type == "error_rate":
        filters, extra = filter_sql(first, ("environment", "release"))
        rows = client.query(
            load_query("alerts/error_rate").replace("{filters}", filters), parameters={**params, **extra}
        ).result_rows
        for project_id, n, failed, release in rows:
            by_project[int(project_id)].append(
                Measurement("*", 100.0 * failed / n if n else None, int(n), since, until, str(release))
            )
    elif first.type == "regression":
        filters, extra = filter_sql(first, ("release",), prefix="h.")
        rows = client.query(
            load_query("alerts/regressions").replace("{filters}", filters), parameters={**params, **extra}
        ).result_rows
        for project_id, issue_id, at, release, title in rows:
            by_project[int(project_id)].append(
                Measurement(
                    f"{issue_id}@{at.isoformat()}",
                    1.0,
                    1,
                    since,
                    now,
                    str(release),
                    str(title or ""),
                    int(issue_id),
                )
            )
    for rule in group:
        out[rule.id].extend(by_project.get(rule.project_id, []))
        if first.type == "error_rate" and not by_project.get(rule.project_id):
            out[rule.id].append(Measurement("*", None, 0, since, until))


def _releases(client: Any, rules: list[AlertRule], now: datetime, out: dict[int, list[Measurement]]) -> None:
    """Crash-free rates: one measurement of the newest release ("*": a rule has one state; no release yet:
    no value, insufficient data). Release regressions: the newest release, scope its version, value 1 when its
    verdict is a regression and 0 when not (the evaluation says which; only a regression notifies)."""
    rates = release_measures.crash_free(client, [r for r in rules if r.type == "crash_free_rate"], now)
    for rule_id, got in rates.items():
        out[rule_id].append(
            Measurement("*", got.value, got.sessions, got.since, got.until, got.release, got.release)
        )
    found = release_measures.verdicts(client, [r for r in rules if r.type == "release_regression"], now)
    for rule_id, verdict in found.items():
        if verdict is None:
            continue
        against = f" against {verdict.previous}" if verdict.previous else ""
        out[rule_id].append(
            Measurement(
                verdict.release,
                1.0 if verdict.regression else 0.0,
                verdict.sessions,
                verdict.since,
                verdict.until,
                verdict.release,
                f"{verdict.release}{against}",
                reasons=verdict.reasons,
            )
        )
