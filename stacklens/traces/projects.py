"""The organization's projects by id, as a trace names them: a span whose source gave no service name stands
for its project (docs/traces.md), and only the organization's own projects are read."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Project


def project_slugs(session: Session, org_id: int) -> dict[int, str]:
    """``{project id: slug}`` of the organization's projects."""
    rows = session.execute(select(Project.id, Project.slug).where(Project.org_id == org_id)).all()
    return {int(pid): str(slug) for pid, slug in rows}
