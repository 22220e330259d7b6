"""Markers on time charts (docs/explore.md): where each release was first seen and where each annotation was
posted, grouped so a chart stays readable.

The rule for too many: a chart shows at most :data:`MOST` markers. Markers closer together than
1/:data:`MOST` of the window are drawn as one, labelled with their number ("3 releases") and listing them
on hover (up to :data:`LISTED`, then "and N more") — a marker per deploy on a busy day becomes one marker
for the day instead of a fence of lines that hides the data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.annotations import Note, list_annotations
from stacklens.control.models import Project
from stacklens.metrics.windows import utc
from stacklens.warehouse.queries import run_query

MOST = 12
LISTED = 10
RELEASE = "release"
ANNOTATION = "annotation"


@dataclass(frozen=True)
class Marker:
    time: datetime
    kind: str  # RELEASE or ANNOTATION
    text: str  # the release's version, or the annotation's text
    project: str  # the project's slug ('' = the organization, for an annotation)
    release: str = ""  # the release (a release marker's version, an annotation's optional release)
    tags: tuple[str, ...] = ()

    @property
    def detail(self) -> str:
        when = self.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        if self.kind == RELEASE:
            return f"{self.text} first seen {when}" + (f" ({self.project})" if self.project else "")
        tags = f" [{', '.join(self.tags)}]" if self.tags else ""
        return f"{self.text}{tags} · {when}"


@dataclass
class MarkerGroup:
    members: list[Marker] = field(default_factory=list)

    @property
    def time(self) -> datetime:
        return self.members[0].time

    @property
    def kind(self) -> str:
        kinds = {m.kind for m in self.members}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    @property
    def named(self) -> Marker:
        """The member a label names: the newest release of the group (what a deploy's chart is about), else
        its first annotation (issue 71: "2 markers" on every chart named nothing)."""
        releases = [m for m in self.members if m.kind == RELEASE]
        return releases[-1] if releases else self.members[0]

    @property
    def name(self) -> str:
        """The named member's text: a release's version, an annotation's first tag (else "note")."""
        only = self.named
        return only.text if only.kind == RELEASE else (only.tags[0] if only.tags else "note")

    @property
    def more(self) -> int:
        """How many members the label does not name."""
        return len(self.members) - 1

    @property
    def label(self) -> str:
        """``shop@1.4.0``, or ``shop@1.4.0 +2 more`` for a group."""
        return self.name + (f" +{self.more} more" if self.more else "")

    @property
    def details(self) -> list[str]:
        shown = [m.detail for m in self.members[:LISTED]]
        if len(self.members) > LISTED:
            shown.append(f"and {len(self.members) - LISTED} more")
        return shown


def release_markers(
    client: Client,
    org_id: int,
    projects: dict[int, str],
    since: datetime,
    until: datetime,
    environment: str = "",
) -> list[Marker]:
    """A marker per release of the projects (id → slug) first seen in [since, until)."""
    if not projects:
        return []
    rows = run_query(
        client,
        "releases/first_seen",
        {
            "org_id": org_id,
            "project_ids": sorted(projects),
            "environment": environment,
            "since": since,
            "until": until,
        },
    )
    out = []
    for row in rows:
        first = row["first_seen"]
        first = first if first.tzinfo else first.replace(tzinfo=UTC)
        version = str(row["release"])
        out.append(Marker(first, RELEASE, version, projects.get(int(row["project_id"]), ""), version))
    return out


# How a chart finds its release markers: release_markers, or a caller's kept copy of it (a dashboard keeps
# them with its widgets' answers, dashboards.dashboard_snapshot).
ReleaseFinder = Callable[[Client, int, dict[int, str], datetime, datetime, str], list[Marker]]


def annotation_markers(notes: list[Note]) -> list[Marker]:
    return [Marker(n.time, ANNOTATION, n.text, n.project, n.release, tuple(n.tags)) for n in notes]


def grouped(markers: list[Marker], since: datetime, until: datetime, most: int = MOST) -> list[MarkerGroup]:
    """The markers in [since, until) by time, those closer than 1/``most`` of the window drawn as one."""
    gap = (until - since) / most
    groups: list[MarkerGroup] = []
    for marker in sorted((m for m in markers if since <= m.time < until), key=lambda m: (m.time, m.text)):
        if groups and marker.time - groups[-1].time < gap:
            groups[-1].members.append(marker)
        else:
            groups.append(MarkerGroup([marker]))
    return groups


def chart_markers(
    client: Client,
    session: Session,
    org_id: int,
    project_ids: list[int],
    since: datetime,
    until: datetime,
    environment: str = "",
    releases: ReleaseFinder = release_markers,
) -> list[MarkerGroup]:
    """The grouped markers of a chart over [since, until) of these projects of the organization: their
    releases' first-seen times (found by ``releases``) and their (and the organization's) annotations.
    Naive times are read as UTC (the engine answers naive UTC times, and a chart built from them passes its
    window as it has it)."""
    since, until = utc(since), utc(until)
    projects = {
        int(i): str(s)
        for i, s in session.execute(
            select(Project.id, Project.slug).where(Project.org_id == org_id, Project.id.in_(project_ids))
        )
    }
    notes = list_annotations(session, org_id, project_ids=list(projects), since=since, until=until)
    found = releases(client, org_id, projects, since, until, environment) + annotation_markers(notes)
    return grouped(found, since, until)
