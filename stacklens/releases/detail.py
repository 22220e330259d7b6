"""One release: its health row and the one before it (:func:`stacklens.releases.health.release_health`), its
figures over time since it was first seen, the issues new in it and those that regressed in it, whether source maps
were uploaded for it, and how many replays it recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.errors import NotFound
from stacklens.releases.health import ReleaseHealth, Window, release_health
from stacklens.releases.sessions import Bucket, series, utc
from stacklens.sourcemaps.store import bundles
from stacklens.warehouse.queries import run_query
from stacklens.warehouse.side_by_side import side_by_side

# The charts start at the release's first seen, at most this long before the window's end (what a page reads).
MAX_SPAN = timedelta(days=90)


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


def release_issues(
    client: Client, org_id: int, project_id: int, version: str
) -> tuple[list[ReleaseIssue], list[ReleaseIssue]]:
    """``(new in the release, regressed in the release)``, most events first, 50 each at most."""
    rows = run_query(
        client, "releases/issues", {"org_id": org_id, "project_id": project_id, "release": version}
    )
    return [_issue(r) for r in rows if r["kind"] == "new"], [
        _issue(r) for r in rows if r["kind"] == "regressed"
    ]


def source_maps(client: Client, org_id: int, project_id: int, version: str) -> SourceMaps:
    found = [b for b in bundles(client, org_id, project_id) if b.release == version]
    if not found:
        return SourceMaps()
    return SourceMaps(len(found), sum(len(b.files) for b in found), max(b.uploaded_at for b in found))


def exists(client: Client, org_id: int, project_id: int, version: str) -> bool:
    """Whether the release was seen at all within the retention (sessions, page loads or error events)."""
    parameters = {"org_id": org_id, "project_id": project_id, "release": version}
    return bool(run_query(client, "releases/exists", parameters)[0]["seen"])


def release_detail(
    client: Client, org_id: int, project_id: int, version: str, window: Window, environment: str = ""
) -> ReleaseDetail:
    """Everything the release page shows; :class:`NotFound` (naming the release) for a release never seen. The
    releases' figures and the release's issues, source maps and replays are read side by side (two clients), then
    its charts from its first seen on."""

    def extras(c: Client) -> tuple[list[ReleaseIssue], list[ReleaseIssue], SourceMaps, int]:
        new, regressed = release_issues(c, org_id, project_id, version)
        parameters = {
            "org_id": org_id,
            "project_id": project_id,
            "release": version,
            "since": window.until - MAX_SPAN,
        }
        replays = run_query(c, "releases/replays", parameters)
        return (
            new,
            regressed,
            source_maps(c, org_id, project_id, version),
            int(replays[0]["replays"]) if replays else 0,
        )

    rows, (new, regressed, maps, replays) = side_by_side(
        client, lambda c: release_health(c, org_id, project_id, window, environment), extras
    )
    index = next((i for i, r in enumerate(rows) if r.version == version), None)
    if index is None and not exists(client, org_id, project_id, version):
        raise NotFound(f"no release {version!r} in this project (none of its sessions, page loads or errors)")
    health = rows[index] if index is not None else None
    previous = rows[index - 1] if index else None
    start = window.until - MAX_SPAN
    if health is not None and health.first_seen is not None:
        start = max(start, health.first_seen)
    else:
        start = max(start, window.since)
    span = Window.last(window.until - start, window.until)
    size, buckets = series(client, org_id, project_id, version, span.since, span.until, environment)
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
