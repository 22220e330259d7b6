"""What the release-health rule types measure, from release health (:mod:`stacklens.releases`):

- ``crash_free_rate``: the crash-free sessions (or users) % of the project's **newest release** — the release
  whose first session started last, in the rule's environment when it has one — over the rule's window, with
  its sessions as the samples. Read with :func:`stacklens.releases.sessions.window_totals`, the read behind
  the release pages' figures (the same session states, the same counting), so a rule says what the release
  list says for the same window and environment.
- ``release_regression``: the verdict of the newest release against the release before it
  (:func:`stacklens.releases.health.release_health` over the rule's window,
  :mod:`stacklens.releases.verdicts`): the release pages' and the releases API's verdict, reasons and all.

Rules of the same organization, project, window and environment share one read. The 30-day preview of a
crash-free rule reads the same states once for every past evaluation (:func:`crash_free_history`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.control.models.alerts import AlertRule
from stacklens.releases.health import Window, release_health
from stacklens.releases.sessions import SessionCounts, window_totals
from stacklens.warehouse.queries import run_query


@dataclass(frozen=True)
class CrashFree:
    """The newest release's crash-free share over a window ('' and no value when the project has no
    sessions)."""

    release: str
    value: float | None  # percent (0-100); None without sessions (or users) in the window
    sessions: int
    since: datetime
    until: datetime


@dataclass(frozen=True)
class NewestVerdict:
    """The newest release's verdict against the release before it over a window."""

    release: str
    previous: str  # '' for the only release of the window
    regression: bool
    reasons: tuple[str, ...]
    sessions: int
    since: datetime
    until: datetime


def share(metric: str, sessions: int, crashed: int, users: int, crashed_users: int) -> float | None:
    """Crash-free sessions or users in percent, as the release pages compute them; None without any."""
    whole, bad = (users, crashed_users) if metric == "crash_free_users" else (sessions, crashed)
    return 100.0 - 100.0 * bad / whole if whole else None  # the release pages' arithmetic, to the last bit


def newest(first_seen: dict[str, datetime | None], before: datetime | None = None) -> str:
    """The release first seen last (the later version on a tie), among those first seen before ``before``."""
    known = [(s, v) for v, s in first_seen.items() if s is not None and (before is None or s < before)]
    return max(known)[1] if known else ""


def _crash_free(rule: AlertRule, counts: dict[str, SessionCounts], span: Window) -> CrashFree:
    release = newest({v: c.first_seen for v, c in counts.items()})
    got = counts.get(release, SessionCounts())
    value = share(rule.metric, got.sessions, got.crashed, got.users, got.crashed_users)
    return CrashFree(release, value, got.sessions, span.since, span.until)


def _groups(rules: Iterable[AlertRule]) -> dict[tuple[int, int, int, str], list[AlertRule]]:
    out: dict[tuple[int, int, int, str], list[AlertRule]] = {}
    for rule in rules:
        out.setdefault((rule.org_id, rule.project_id, rule.window_seconds, rule.environment), []).append(rule)
    return out


def crash_free(client: Any, rules: list[AlertRule], now: datetime) -> dict[int, CrashFree]:
    """Rule id → its crash-free figure of the newest release over the window ending ``now``."""
    out: dict[int, CrashFree] = {}
    for (org_id, project_id, seconds, environment), group in _groups(rules).items():
        span = Window.last(timedelta(seconds=seconds), now)
        totals = window_totals(client, org_id, project_id, span.since, span.until, environment)
        for rule in group:
            out[rule.id] = _crash_free(rule, totals.releases, span)
    return out


def verdicts(client: Any, rules: list[AlertRule], now: datetime) -> dict[int, NewestVerdict | None]:
    """Rule id → the newest release's verdict over the window ending ``now`` (None: no release in it)."""
    out: dict[int, NewestVerdict | None] = {}
    for (org_id, project_id, seconds, environment), group in _groups(rules).items():
        found = newest_verdict(client, org_id, project_id, timedelta(seconds=seconds), environment, now)
        out.update({rule.id: found for rule in group})
    return out


def newest_verdict(
    client: Any, org_id: int, project_id: int, window: timedelta, environment: str, now: datetime
) -> NewestVerdict | None:
    span = Window.last(window, now)
    rows = release_health(client, org_id, project_id, span, environment)
    if not rows:
        return None
    last = rows[-1]  # oldest first, by first seen
    verdict = last.verdict
    return NewestVerdict(
        last.version,
        last.previous_release,
        verdict.regression,
        tuple(verdict.reasons),
        last.sessions,
        span.since,
        span.until,
    )


def crash_free_history(
    client: Any, rule: AlertRule, times: list[datetime]
) -> list[tuple[datetime, float | None, int, str]]:
    """``(at, value, sessions, release)`` at each past evaluation time (whole hours, evenly spaced) as the
    live rule would have measured it then: the release first seen last before ``at``, its share over the
    window."""
    if not times:
        return []
    window = timedelta(seconds=rule.window_seconds)
    step = times[1] - times[0] if len(times) > 1 else timedelta(hours=1)
    # First seen: the release's first session within the retention, in the rule's environment (the live
    # read's).
    first_seen = {
        version: counts.first_seen
        for version, counts in window_totals(
            client, rule.org_id, rule.project_id, times[-1] - window, times[-1], rule.environment
        ).releases.items()
    }
    rows = run_query(
        client,
        "alerts/crash_free_series",
        {
            "org_id": rule.org_id,
            "project_id": rule.project_id,
            "environment": rule.environment,
            "grain": "hour" if rule.window_seconds % 3600 == 0 else "minute",
            "first": times[0],
            "step_seconds": int(step.total_seconds()),
            "count": len(times),
            "window_seconds": rule.window_seconds,
        },
    )
    counts: dict[tuple[datetime, str], dict[str, Any]] = {(_utc(r["at"]), str(r["release"])): r for r in rows}
    out: list[tuple[datetime, float | None, int, str]] = []
    for at in times:
        release = newest(first_seen, before=at)
        row = counts.get((at, release))
        if row is None:
            out.append((at, None, 0, release))
            continue
        sessions = int(row["sessions"])
        value = share(
            rule.metric, sessions, int(row["crashed"]), int(row["users"]), int(row["crashed_users"])
        )
        out.append((at, value, sessions, release))
    return out


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
