"""Projects: creating one (with its primary app key) and finding one by its slug.

A project's own settings, quotas and retention have modules of their own (``projects_settings``,
``project_quotas``, ``project_retention``); its keys are :mod:`stacklens.control.keys.lifecycle`'. Callers
own the transaction.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.keys.lifecycle import insert_app_key
from stacklens.control.models import Organization, Project
from stacklens.control.slugs import unique_slug

PLATFORMS = ("python", "javascript", "node", "go", "java", "ruby", "php", "dotnet", "other")


def create_project(session: Session, org_id: int, name: str, platform: str = "python") -> tuple[Project, str]:
    """A new project with its primary app key (value returned); the slug is unique across the installation."""
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise AccountError("the project name must have 1 to 200 characters")
    if platform not in PLATFORMS:
        raise AccountError(f"unknown platform {platform!r}; use one of {', '.join(PLATFORMS)}")
    if session.get(Organization, org_id) is None:
        raise AccountNotFound(f"no organization with id {org_id}")
    project = Project(org_id=org_id, name=name, slug=unique_slug(session, Project, name), platform=platform)
    session.add(project)
    session.flush()
    record_activity(session, org_id, "project.created", "project", project.id, None, {"slug": project.slug})
    value = insert_app_key(session, project, None, None, "app_key.created")
    return project, value


def project_by_slug(session: Session, slug: str, org_id: int | None = None) -> Project:
    """The project with this slug; with ``org_id``, only when it belongs to that organization."""
    query = select(Project).where(Project.slug == (slug or "").strip().lower())
    if org_id is not None:
        query = query.where(Project.org_id == org_id)
    project = session.scalar(query)
    if project is None:
        where = " in this organization" if org_id is not None else ""
        raise AccountNotFound(f"no project with slug {slug!r}{where}")
    return project
