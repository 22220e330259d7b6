"""Per-project settings read on hot paths (ingest) and changed from the project settings page."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Project


def replay_enabled(session: Session, project_id: int) -> bool:
    """Whether the project keeps session replays; a project that is gone keeps nothing."""
    value = session.scalar(select(Project.replay_enabled).where(Project.id == project_id))
    return bool(value)


def set_replay_enabled(session: Session, org_id: int, project_id: int, enabled: bool) -> bool:
    """Turn replay ingest on or off for a project of ``org_id``; ``False`` when there is no such project."""
    project = session.scalar(select(Project).where(Project.id == project_id, Project.org_id == org_id))
    if project is None:
        return False
    project.replay_enabled = enabled
    return True
