"""One release: its health row and the one before it (the rows of
:func:`stacklens.releases.health.release_health`, from the same reads), its figures over time since it was
first seen, the issues new in it and those that regressed in it, whether source maps were uploaded for it,
and how many replays it recorded."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.errors import NotFound
from stacklens.releases.health import ReleaseHealth, Window, assemble, first_seen
from stacklens.releases.impact import ReleaseRow
from stacklens.releases.list_reads import (
    Lifetimes,
    lifetimes,
    new_issue_counts,
    performance_lifetimes,
    performance_read,
)
from stacklens.releases.sessions import (
    Bucket,
    SessionTotals,
    first_sessions,
    series,
    totals_of,
    utc,
    window_counts,
)
from stacklens.sourcemaps.store import bundles
from stacklens.warehouse.queries import run_query
from stacklens.warehouse.side_by_side import side_by_side

# The charts start at the release's first seen, at most this long before the window's end (what a page reads).
MAX_SPAN = timedelta(days=90)
# The issues new in a release and those that regressed in it: the most frequent of each kind.
ISSUES_SHOWN = 50


@dataclass(frozen=True)
class ReleaseIssue:
    issue_id: int
    title: str
    culprit: str
    level: str
    status: str
    events: int
    users: int
    first_seen: datetime | None
    last_seen: datetime | None
    regressed_at: datetime | None = None


@dataclass(frozen=True)
class SourceMaps:
    """The bundles uploaded for the release (any dist): how many, their files, the newest upload."""

    bundles: int = 0
    files: int = 0
    last_upload: datetime | None = None

    @property
    def uploaded(self) -> bool:
        return self.bundles > 0


@dataclass(frozen=True)
class ReleaseDetail:
    health: ReleaseHealth | None  # None: the release has no data in the window
    previous: ReleaseHealth | None
    since: datetime  # the charts' span: first seen (or MAX_SPAN before the end) to the window's end
    until: datetime
    bucket: timedelta
    buckets: list[Bucket] = field(default_factory=list)
    new_issues: list[ReleaseIssue] = field(default_factory=list)
    regressed_issues: list[ReleaseIssue] = field(default_factory=list)
    source_maps: SourceMaps = SourceMaps()
    replays: int = 0


def _issue(row: dict[str, Any]) -> ReleaseIssue:
    def moment(value: Any) -> datetime | None:
        return None if value is None else utc(value)

    return ReleaseIssue(
        issue_id=int(row["issue_id"]),
        title=str(row["title"]),
        culprit=str(row["culprit"]),
        level=str(row["level"]),
        status=str(row["status"]),
        events=int(row["events"]),
        users=int(row["users"]),
        first_seen=moment(row["first_seen"]),
        last_seen=moment(row["last_seen"]),
        regressed_at=moment(row["at"]),
    )


Issues = tuple[list[ReleaseIssue], list[ReleaseIssue]]  # (new in the release, regressed in it)


def release_issues(client: Client, org_id: int, project_id: int, version: str) -> Issues:
    """``(new in the release, regressed in the release)``, most events first, 50 each at most: which issues
    (one small read), then the issue list's live figures of those only (none read for a release without
    any)."""
    parameters = {"org_id": org_id, "project_id": project_id, "release": version}
    picked = run_query(client, "releases/issue_ids", parameters)
    if not picked:
        return [], []
    ids = sorted({int(r["issue_id"]) for r in picked})
    listed = {int(r["issue_id"]): r for r in run_query(client, "releases/issues", {**parameters, "ids": ids})}
    out: dict[str, list[ReleaseIssue]] = {"new": [], "regressed": []}
    for row in picked:
        found = listed.get(int(row["issue_id"]))
        if found is not None:  # an issue the list does not know yet is left out, as the list leaves it out
            out[str(row["kind"])].append(_issue({**found, "at": row["at"]}))
    for issues in out.values():
        issues.sort(key=lambda i: (-i.events, i.issue_id))
    return out["new"][:ISSUES_SHOWN], out["regressed"][:ISSUES_SHOWN]


def source_maps(client: Client, org_id: int, project_id: int, version: str) -> SourceMaps:
    found = [b for b in bundles(client, org_id, project_id) if b.release == version]
    if not found:
        return SourceMaps()
    return SourceMaps(len(found), sum(len(b.files) for b in found), max(b.uploaded_at for b in found))


def exists(client: Client, org_id: int, project_id: int, version: str) -> bool:
    """Whether the release was seen at all within the retention (sessions, page loads or error events)."""
    parameters = {"org_id": org_id, "project_id": project_id, "release": version}
    return bool(run_query(client, "releases/exists", parameters)[0]["seen"])


def chart_span(window: Window, first_seen: datetime | None) -> Window:
    """The charts' span: from the release's first seen (the window's start for a release without data in
    it), at most :data:`MAX_SPAN` before the window's end, to the window's end; whole minutes."""
    start = max(window.until - MAX_SPAN, first_seen or window.since)
    return Window.last(window.until - start, window.until)


def release_detail(
    client: Client, org_id: int, project_id: int, version: str, window: Window, environment: str = ""
) -> ReleaseDetail:
    """Everything the release page shows; :class:`NotFound` (naming the release) for a release never seen.

    Two clients read side by side (stacklens.warehouse.side_by_side), the work split so that both take
    about as long (bench/releases.py): one reads the list's session figures (first session starts first)
    and new issues, then the release's issues, source maps and replays; the other the list's performance
    figures (the Release impact view's read, the longest), then the release's charts. The charts start at
    the release's first seen, which the list takes from those two reads alone — its first session start and
    its performance row — so the second client reads them as soon as the first has the first session
    starts. Only for a release that turns out not to be listed (no data in the window) are they read again,
    from the window's start."""
    firsts: Future[dict[str, datetime]] = Future()

    def sessions_and_extras(
        c: Client,
    ) -> tuple[SessionTotals, Lifetimes | None, dict[str, int], Issues, SourceMaps, int]:
        try:
            firsts.set_result(first_sessions(c, org_id, project_id, environment))
        except BaseException as exc:  # the other client waits for them: never leave it waiting
            firsts.set_exception(exc)
            raise
        counts = window_counts(c, org_id, project_id, window.since, window.until, environment)
        totals = totals_of(counts, firsts.result())
        lived = lifetimes(c, org_id, project_id, window, totals, environment)
        new_issues = new_issue_counts(c, org_id, project_id)
        issues = release_issues(c, org_id, project_id, version)
        parameters = {
            "org_id": org_id,
            "project_id": project_id,
            "release": version,
            "since": window.until - MAX_SPAN,
        }
        replays = run_query(c, "releases/replays", parameters)
        maps = source_maps(c, org_id, project_id, version)
        return totals, lived, new_issues, issues, maps, int(replays[0]["replays"]) if replays else 0

    def performance_and_charts(
        c: Client,
    ) -> tuple[list[ReleaseRow], Window, tuple[timedelta, list[Bucket]]]:
        performance = performance_read(c, org_id, project_id, window, environment)
        row = next((r for r in performance if str(r["release"]) == version), None)
        span = chart_span(window, first_seen(firsts.result().get(version), row))
        return performance, span, series(c, org_id, project_id, version, span.since, span.until, environment)

    (totals, lived, new_issues, (new, regressed), maps, replays), (performance, ahead, charts) = side_by_side(
        client, sessions_and_extras, performance_and_charts
    )
    judged = performance_lifetimes(client, org_id, project_id, window, totals, performance, environment)
    rows = assemble(totals, new_issues, judged, lived)
    index = next((i for i, r in enumerate(rows) if r.version == version), None)
    if index is None and not exists(client, org_id, project_id, version):
        raise NotFound(f"no release {version!r} in this project (none of its sessions, page loads or errors)")
    health = rows[index] if index is not None else None
    previous = rows[index - 1] if index else None
    span = chart_span(window, health.first_seen if health is not None else None)
    size, buckets = (
        charts
        if span == ahead
        else series(client, org_id, project_id, version, span.since, span.until, environment)
    )
    return ReleaseDetail(
        health=health,
        previous=previous,
        since=span.since,
        until=span.until,
        bucket=size,
        buckets=buckets,
        new_issues=new,
        regressed_issues=regressed,
        source_maps=maps,
        replays=replays,
    )
