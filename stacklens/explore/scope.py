"""Which projects an Explore query may read: the organization's own, or one of them by slug."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Project
from stacklens.errors import NotFound


def project_ids(session: Session, org_id: int, slug: str) -> list[int]:
    """Every project id of the organization, or the one of ``slug``; :class:`NotFound` when the slug is not
    a project of this organization (another organization's project answers the same)."""
    query = select(Project.id).where(Project.org_id == org_id)
    if slug:
        query = query.where(Project.slug == slug.strip().lower())
    ids = [int(i) for i in session.scalars(query.order_by(Project.id))]
    if slug and not ids:
        raise NotFound(f"project: no project {slug!r} in this organization")
    return ids
