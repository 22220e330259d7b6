"""Release health: every release of a project with its session figures (sessions, users, crash-free sessions
and users, errored sessions, adoption), its performance figures from the metrics layer (page loads, errors per
1,000 page loads, load time p75, JavaScript per page view, API time p95:
:func:`stacklens.performance.page_load_reads.releases`, the Release impact view's read) and its new issues —
each against the release before it, with the verdict of :mod:`stacklens.releases.verdicts`.

``release_health(client, org_id, project_id, window, environment)`` is the one entry point: the release pages,
the releases API and the release alert rules call it. Releases are ordered by first seen (the earliest session
start or page load within the retention, whatever the window, so a window does not reorder releases); a
release is listed when it has sessions, page loads or error events in the window. The previous release of a
row is the row before it: the same environment filter, the same window.

A verdict compares each release from its first session or page load (within the retention) to the window's
end, not over the part of it the window's start left: the oldest release of a window is usually cut by it, and
a baseline that shrinks as the window slides is a new sample every minute — the verdict of the release after
it would flip without any new traffic (a cut that left shop@1.1.0's quietest ~250 page loads made
shop@1.2.0's errors a regression at p = 0.015). So the session rates are compared over the release's sessions
to the window's end, and the performance figures (errors per 1,000 page loads, load p75, API p95, JavaScript
per view) over its page loads and errors to the window's end. The rows show the window's figures; a verdict's
reason says when a side reaches back before the window, and the changes in a row are the compared ones. The
Release impact view of the performance pages judges within its window and filters: an analyst's cut, not the
release's verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.releases.impact import ReleaseRow, interval_of, performance_figures
from stacklens.releases.list_reads import (
    Lifetimes,
    PerformanceReads,
    earliest,
    performance_lifetimes,
    performance_read,
    session_reads,
)
from stacklens.releases.sessions import SessionCounts, SessionTotals
from stacklens.releases.verdicts import Figures, Verdict, verdict
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.side_by_side import side_by_side


@dataclass(frozen=True)
class Window:
    """[since, until) in UTC, whole minutes (as the performance filters cut a window)."""

    since: datetime
    until: datetime

    @classmethod
    def last(cls, length: timedelta, now: datetime | None = None) -> Window:
        """The window of ``length`` ending now (or ``now``)."""
        end = (now or datetime.now(UTC)).astimezone(UTC)
        cut = ViewFilters(since=end - length, until=end)
        return cls(cut.since, cut.until)

    @classmethod
    def of(cls, filters: ViewFilters) -> Window:
        return cls(filters.since, filters.until)


def _pct(part: int, whole: int) -> float | None:
    return 100.0 * part / whole if whole else None


@dataclass(frozen=True)
class ReleaseHealth:
    """One release over a window and environment; the field names are the API's and the pages'
    (docs/releases.md). Shares are percent (0-100), times milliseconds, sizes bytes; ``None`` where there
    were no samples."""

    version: str
    first_seen: datetime | None
    sessions: int
    users: int
    crashed_sessions: int
    errored_sessions: int
    abnormal_sessions: int
    crashed_users: int
    errored_users: int
    crash_free_sessions: float | None
    crash_free_users: float | None
    errored_sessions_pct: float | None
    adoption: float | None  # share of the environment's sessions in the 24 h before the window's end
    adoption_users: float | None
    sessions_24h: int
    users_24h: int
    page_loads: int
    error_events: int
    errors_per_1k_page_loads: float | None
    errors_per_session: float | None
    new_issues: int
    load_p75: float | None
    load_p75_low: float | None  # its 95 % confidence interval
    load_p75_high: float | None
    js_bytes_per_view: float | None
    api_calls: int
    api_p95: float | None
    api_p95_low: float | None
    api_p95_high: float | None
    previous_release: str
    crash_free_sessions_change: float | None  # percentage points against the previous release
    crash_free_users_change: float | None
    errors_per_1k_change_pct: float | None  # percent of the previous release's value
    load_p75_change_pct: float | None
    js_bytes_per_view_change_pct: float | None
    api_p95_change_pct: float | None
    verdict: Verdict = field(default_factory=lambda: Verdict(False, ()))

    def figures(self) -> Figures:
        """What the verdict compares of this release."""
        interval = interval_of
        return Figures(
            version=self.version,
            sessions=self.sessions,
            crashed_sessions=self.crashed_sessions,
            errored_sessions=self.errored_sessions,
            users=self.users,
            crashed_users=self.crashed_users,
            page_loads=self.page_loads,
            error_events=self.error_events,
            load_p75=interval(self.load_p75, self.load_p75_low, self.load_p75_high, self.page_loads),
            api_p95=interval(self.api_p95, self.api_p95_low, self.api_p95_high, self.api_calls),
            js_bytes_per_view=self.js_bytes_per_view,
        )

    def as_dict(self) -> dict[str, Any]:
        """The API's row: every field, the verdict as ``{"regression", "reasons", "previous_release",
        "comparisons"}``."""
        out = {k: v for k, v in asdict(self).items() if k != "verdict"}
        out["verdict"] = self.verdict.as_dict()
        return out

    def csv_row(self) -> dict[str, Any]:
        """The CSV's row: the same fields, the verdict flattened to ``regression`` and ``verdict_reasons``."""
        out = {k: v for k, v in asdict(self).items() if k != "verdict"}
        out["regression"] = self.verdict.regression
        out["verdict_reasons"] = " | ".join(self.verdict.reasons)
        return out


def _difference(current: float | None, previous: float | None, relative: bool) -> float | None:
    if current is None or previous is None:
        return None
    if not relative:
        return current - previous
    return 100.0 * (current - previous) / previous if previous else None


def first_seen(first_session: datetime | None, performance: ReleaseRow | None) -> datetime | None:
    """A release's first seen: the earlier of its first session start and the first seen of its Release impact
    row (first page load, else first error event in the window)."""
    return earliest(first_session, performance["first_seen"] if performance else None)


def _judged(
    row: ReleaseHealth, counts: SessionCounts, lived: Lifetimes | None, performance: PerformanceReads | None
) -> Figures:
    """What the verdict compares of ``row``: its figures; the session ones over its whole life up to the
    window's end when its sessions began before the window (``lived``, :func:`lifetimes`), the performance
    ones likewise when its page loads or errors did (``performance.lived``, :func:`performance_lifetimes`)."""
    figures = row.figures()
    first = counts.first_seen
    if lived is not None and first is not None and first < lived.window_since:
        whole = lived.releases.get(row.version, counts)
        figures = replace(
            figures,
            sessions=whole.sessions,
            crashed_sessions=whole.crashed,
            errored_sessions=whole.errored,
            users=whole.users,
            crashed_users=whole.crashed_users,
            sessions_since=first,
        )
    whole_perf = performance.lived.get(row.version) if performance is not None else None
    began = earliest(whole_perf["first_seen"]) if whole_perf is not None else None
    since = performance.window_since if performance is not None else None
    if whole_perf is None or began is None or since is None or began >= since:
        return figures
    lived_perf = performance_figures(whole_perf)
    return replace(
        figures,
        page_loads=lived_perf.page_loads,
        error_events=lived_perf.error_events,
        load_p75=lived_perf.load_p75,
        api_p95=lived_perf.api_p95,
        js_bytes_per_view=lived_perf.js_bytes_per_view,
        page_loads_since=began,
    )


def _build(
    version: str,
    counts: SessionCounts,
    totals: SessionCounts,
    performance: ReleaseRow | None,
    new_issues: int,
    before: tuple[ReleaseHealth, Figures] | None,
    lived: Lifetimes | None = None,
    performance_lived: PerformanceReads | None = None,
) -> tuple[ReleaseHealth, Figures]:
    """The row of ``version`` and what its verdict compares, against the row before it and its figures."""
    previous, previous_figures = before if before else (None, None)
    perf: Mapping[str, Any] = performance or {}  # without page loads or errors: every figure missing
    page_loads = int(perf.get("views") or 0)
    errors = int(perf.get("error_events") or 0)
    crash_free = 100.0 * (1 - counts.crashed / counts.sessions) if counts.sessions else None
    crash_free_users = 100.0 * (1 - counts.crashed_users / counts.users) if counts.users else None
    errors_per_1k = 1000.0 * errors / page_loads if page_loads else None

    row = ReleaseHealth(
        version=version,
        first_seen=first_seen(counts.first_seen, performance),
        sessions=counts.sessions,
        users=counts.users,
        crashed_sessions=counts.crashed,
        errored_sessions=counts.errored,
        abnormal_sessions=counts.abnormal,
        crashed_users=counts.crashed_users,
        errored_users=counts.errored_users,
        crash_free_sessions=crash_free,
        crash_free_users=crash_free_users,
        errored_sessions_pct=_pct(counts.errored, counts.sessions),
        adoption=_pct(counts.recent_sessions, totals.recent_sessions),
        adoption_users=_pct(counts.recent_users, totals.recent_users),
        sessions_24h=counts.recent_sessions,
        users_24h=counts.recent_users,
        page_loads=page_loads,
        error_events=errors,
        errors_per_1k_page_loads=errors_per_1k,
        errors_per_session=errors / counts.sessions if counts.sessions else None,
        new_issues=new_issues,
        load_p75=perf.get("load_p75"),
        load_p75_low=perf.get("load_p75_low"),
        load_p75_high=perf.get("load_p75_high"),
        js_bytes_per_view=perf.get("js_bytes_per_view"),
        api_calls=int(perf.get("api_calls") or 0),
        api_p95=perf.get("api_p95"),
        api_p95_low=perf.get("api_p95_low"),
        api_p95_high=perf.get("api_p95_high"),
        previous_release=previous.version if previous else "",
        # Below: the changes the verdict compares.
        crash_free_sessions_change=None,
        crash_free_users_change=None,
        errors_per_1k_change_pct=None,
        load_p75_change_pct=None,
        js_bytes_per_view_change_pct=None,
        api_p95_change_pct=None,
    )
    figures = _judged(row, counts, lived, performance_lived)

    def compared(judged: Figures | None, shown: ReleaseHealth | None, key: str) -> float | None:
        """A figure as the verdict compares it (a percentile without its interval, too few samples for one:
        the row's)."""
        if judged is None or shown is None:
            return None
        value = judged.value(key)
        return value if value is not None else getattr(shown, key)

    def change(key: str, relative: bool) -> float | None:
        """The change the verdict compares: a release that began before the window, over its whole life."""
        return _difference(compared(figures, row, key), compared(previous_figures, previous, key), relative)

    row = replace(
        row,
        crash_free_sessions_change=change("crash_free_sessions", False),
        crash_free_users_change=change("crash_free_users", False),
        errors_per_1k_change_pct=change("errors_per_1k_page_loads", True),
        load_p75_change_pct=change("load_p75", True),
        js_bytes_per_view_change_pct=change("js_bytes_per_view", True),
        api_p95_change_pct=change("api_p95", True),
        verdict=verdict(figures, previous_figures),
    )
    return row, figures


def assemble(
    totals: SessionTotals,
    issues: dict[str, int],
    performance: PerformanceReads,
    lived: Lifetimes | None = None,
) -> list[ReleaseHealth]:
    """The list's rows from its reads (:func:`session_reads`, :func:`performance_read`): every release with
    sessions, page loads or error events, oldest first, each judged against the one before it (over its whole
    life to the window's end for a release that began before the window: ``lived``, ``performance.lived``)."""
    by_release = {str(r["release"]): r for r in performance.rows}
    listed = {v for v, c in totals.releases.items() if c.sessions} | set(by_release)
    empty = SessionCounts()

    def order(version: str) -> tuple[datetime, str]:
        found = first_seen(totals.releases.get(version, empty).first_seen, by_release.get(version))
        return (found or datetime.max.replace(tzinfo=UTC), version)

    out: list[tuple[ReleaseHealth, Figures]] = []
    for version in sorted(listed, key=order):
        counts = totals.releases.get(version, empty)
        before = out[-1] if out else None
        row = by_release.get(version)
        out.append(
            _build(version, counts, totals.total, row, issues.get(version, 0), before, lived, performance)
        )
    return [row for row, _ in out]


def release_health(
    client: Client,
    org_id: int,
    project_id: int,
    window: Window | timedelta,
    environment: str = "",
) -> list[ReleaseHealth]:
    """Every release with sessions, page loads or error events in ``window`` (a :class:`Window`, or a length
    ending now) and ``environment`` ('' = all), oldest first, each with its verdict against the one before it.
    The session states and the performance states are read side by side (two clients)."""
    span = Window.last(window) if isinstance(window, timedelta) else window
    (totals, issues, lived), rows = side_by_side(
        client,
        lambda c: session_reads(c, org_id, project_id, span, environment),
        lambda c: performance_read(c, org_id, project_id, span, environment),
    )
    performance = performance_lifetimes(client, org_id, project_id, span, totals, rows, environment)
    return assemble(totals, issues, performance, lived)
