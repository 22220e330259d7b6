"""Per-project settings read on hot paths (ingest) and changed from the project settings page."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Project
from stacklens.ingest.in_app import NO_RULES, InAppRules


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


def in_app_rules(session: Session, project_id: int) -> InAppRules:
    """The project's in-app module prefixes (none for a project that is gone)."""
    row = session.execute(
        select(Project.in_app_include, Project.in_app_exclude).where(Project.id == project_id)
    ).first()
    if row is None:
        return NO_RULES
    return rules_of(row[0], row[1])


def rules_of(include: object, exclude: object) -> InAppRules:
    """In-app rules from a project's two stored columns (lists of module prefixes)."""
    return InAppRules(_prefixes(include), _prefixes(exclude))


def _prefixes(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def set_in_app_rules(session: Session, org_id: int, project_id: int, rules: InAppRules) -> bool:
    """Replace the in-app prefixes of a project of ``org_id``; ``False`` when there is no such project."""
    project = session.scalar(select(Project).where(Project.id == project_id, Project.org_id == org_id))
    if project is None:
        return False
    project.in_app_include = list(rules.include)
    project.in_app_exclude = list(rules.exclude)
    return True
