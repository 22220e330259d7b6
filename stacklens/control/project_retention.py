"""A project's own retention: how many days of its raw data the installation keeps, and its event caps
(docs/operations.md).

Unset, a project keeps what the installation keeps (``STACKLENS_RETENTION_DAYS``, the engine's TTL); set, it
keeps fewer days, applied by the retention run (stacklens/operations/retention.py). It can never keep more
than the installation: the TTL drops everything older whatever a project says.

Event caps (as Bugsink and GlitchTip keep them): at most N error events per issue and/or in the whole project,
the oldest removed first by the same run (stacklens/operations/event_caps.py); the issue counters keep
counting every event received. Changed by ``PUT /api/projects/{slug}/retention``, ``stacklens admin
set-retention`` and the project's settings page; each change is in the organization's activity log."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import Organization, Project
from stacklens.errors import InvalidInput, NotFound


@dataclass(frozen=True)
class ProjectRetention:
    project_id: int
    org_id: int
    name: str  # "<org slug>/<project slug>"
    days: int | None  # None: the installation's
    max_events_per_issue: int | None = None  # None: no cap
    max_events_per_project: int | None = None


# The largest cap accepted: beyond it a cap would never bite before the days do on any installation we
# measured (bench: 1 M events a day is a large one), and a typo of a few zeros is refused instead of meaning
# "no cap".
MAX_CAP = 100_000_000


def set_project_retention(
    session: Session,
    org_id: int,
    project_id: int,
    days: int | None,
    installation_days: int,
    actor_user_id: int | None = None,
) -> ProjectRetention:
    """Set the days ``project_id`` keeps (None: the installation's); at most ``installation_days``."""
    project = session.scalar(select(Project).where(Project.id == project_id, Project.org_id == org_id))
    if project is None:
        raise NotFound(f"no project {project_id} in this organization")
    if days is not None and (isinstance(days, bool) or not 1 <= days <= installation_days):
        raise InvalidInput(
            f"days: must be from 1 to {installation_days} (the installation keeps {installation_days} days, "
            "STACKLENS_RETENTION_DAYS), or null for the installation's"
        )
    before = project.retention_days
    project.retention_days = days
    record_activity(
        session,
        org_id,
        "project_retention.changed",
        "project",
        project_id,
        actor_user_id,
        {"project": project.slug, "days": days, "before": before},
    )
    return _row(project, project.organization.slug)


def set_event_caps(
    session: Session,
    org_id: int,
    project_id: int,
    per_issue: int | None,
    per_project: int | None,
    actor_user_id: int | None = None,
) -> ProjectRetention:
    """Set the most error events ``project_id`` keeps per issue and in all (None: no cap); the next
    retention run removes the oldest beyond them."""
    project = session.scalar(select(Project).where(Project.id == project_id, Project.org_id == org_id))
    if project is None:
        raise NotFound(f"no project {project_id} in this organization")
    for field, value in (("max_events_per_issue", per_issue), ("max_events_per_project", per_project)):
        if value is not None and (isinstance(value, bool) or not 1 <= value <= MAX_CAP):
            raise InvalidInput(f"{field}: must be from 1 to {MAX_CAP:,}, or null for no cap")
    before = {
        "max_events_per_issue": project.max_events_per_issue,
        "max_events_per_project": project.max_events_per_project,
    }
    project.max_events_per_issue = per_issue
    project.max_events_per_project = per_project
    record_activity(
        session,
        org_id,
        "project_event_caps.changed",
        "project",
        project_id,
        actor_user_id,
        {
            "project": project.slug,
            "max_events_per_issue": per_issue,
            "max_events_per_project": per_project,
            "before": before,
        },
    )
    return _row(project, project.organization.slug)


def retention_of(session: Session, project_id: int) -> ProjectRetention:
    project = session.get(Project, project_id)
    if project is None:
        raise NotFound(f"no project {project_id}")
    return _row(project, project.organization.slug)


def retentions(session: Session) -> list[ProjectRetention]:
    """Every project of the installation with its retention (the operators' view and the retention run)."""
    rows = session.execute(
        select(Project, Organization.slug)
        .join(Organization, Organization.id == Project.org_id)
        .order_by(Organization.slug, Project.slug)
    )
    return [_row(project, org_slug) for project, org_slug in rows]


def _row(project: Project, org_slug: str) -> ProjectRetention:
    return ProjectRetention(
        project.id,
        project.org_id,
        f"{org_slug}/{project.slug}",
        project.retention_days,
        project.max_events_per_issue,
        project.max_events_per_project,
    )
