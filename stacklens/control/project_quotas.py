"""A project's own quotas inside its organization's: events per minute over every category, and a limit per
data category. Spent on every request by the ingest entrances (read about once a second per project);
changed by `PUT /api/projects/{slug}/quota`, `stacklens admin set-quota --project` and the project settings
page. Both are spent from token buckets (api/token_buckets.py) beside the organization's quota.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.remembered import Remembered
from stacklens.errors import InvalidInput, NotFound
from stacklens.settings import Settings

# Categories a project may limit on their own: the outcome categories an SDK sends as items (client reports
# are never limited, attachments are counted and not kept).
LIMITED_CATEGORIES = ("error", "transaction", "span", "session", "log", "replay")
MAX_PER_MINUTE = 100_000_000
# The bytes of attachments the project keeps (docs/feedback.md), stored beside the category limits under this
# key; absent: the installation's STACKLENS_ATTACHMENT_QUOTA_BYTES.
ATTACHMENT_BYTES = "attachment_bytes"
MAX_ATTACHMENT_BYTES = 2**50  # 1 PiB


@dataclass(frozen=True)
class ProjectQuota:
    """A project's limits; ``events_per_minute`` None: the organization's quota alone."""

    project_id: int
    events_per_minute: int | None = None
    categories: Mapping[str, int] = field(default_factory=dict)
    attachment_bytes: int | None = None  # None: the installation's attachment quota

    def as_dict(self) -> dict[str, object]:
        return {
            "events_per_minute": self.events_per_minute,
            "categories": dict(self.categories),
            "attachment_bytes": self.attachment_bytes,
        }

    def attachment_quota(self, settings: Settings) -> int:
        """The bytes of attachments the project may keep: its own quota, else the installation's."""
        return settings.attachment_quota_bytes if self.attachment_bytes is None else self.attachment_bytes


def _categories(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {
        str(k): int(v)
        for k, v in value.items()
        if k in LIMITED_CATEGORIES and isinstance(v, int) and not isinstance(v, bool)
    }


def _attachment_bytes(value: object) -> int | None:
    found = value.get(ATTACHMENT_BYTES) if isinstance(value, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) and found >= 0 else None


def quota_of(project_id: int, events_per_minute: int | None, categories: object) -> ProjectQuota:
    """A project's quota from its two stored columns."""
    return ProjectQuota(project_id, events_per_minute, _categories(categories), _attachment_bytes(categories))


def checked_attachment_bytes(value: object) -> int | None:
    """A project's attachment quota as given (None: the installation's); raises InvalidInput naming
    ``attachment_bytes`` otherwise."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_ATTACHMENT_BYTES:
        raise InvalidInput(
            f"attachment_bytes must be an integer from 0 to {MAX_ATTACHMENT_BYTES}, or null for the "
            "installation's quota"
        )
    return value


def project_quotas(session: Session, project_ids: Collection[int]) -> dict[int, ProjectQuota]:
    """The quotas of ``project_ids`` (projects that are gone have none)."""
    ids = sorted({p for p in project_ids if p})
    if not ids:
        return {}
    rows = session.execute(
        select(Project.id, Project.events_per_minute, Project.category_quotas).where(Project.id.in_(ids))
    )
    return {row.id: quota_of(row.id, row.events_per_minute, row.category_quotas) for row in rows}


_remembered: Remembered[tuple[str, int], ProjectQuota | None] = Remembered()


def remembered_project_quota(settings: Settings, project_id: int) -> ProjectQuota | None:
    """The quota of ``project_id`` (None: the project is gone), read about once a second per project
    (:mod:`stacklens.control.remembered`): the entrances spend it on every request."""

    def read() -> ProjectQuota | None:
        with session_scope(settings) as session:
            return project_quotas(session, [project_id]).get(project_id)

    return _remembered.answer((settings.resolved_database_url, project_id), read)


def _checked(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_PER_MINUTE:
        raise InvalidInput(f"{name} must be an integer from 1 to {MAX_PER_MINUTE}, or null for no limit")
    return value


def set_project_quota(
    session: Session,
    org_id: int,
    project_id: int,
    events_per_minute: int | None,
    categories: Mapping[str, int | None] | None = None,
    actor_user_id: int | None = None,
    attachment_bytes: int | Literal["keep"] | None = "keep",
) -> ProjectQuota:
    """Set a project's events per minute (None: no limit of its own) and, when given, replace its
    per-category limits (a category set to None has none) and its attachment quota in bytes (None: the
    installation's; ``"keep"``: unchanged). Applies on the next request."""
    project = session.scalar(select(Project).where(Project.id == project_id, Project.org_id == org_id))
    if project is None:
        raise NotFound(f"no project {project_id} in this organization")
    if events_per_minute is not None:
        _checked("events_per_minute", events_per_minute)
    limits: dict[str, int] = _categories(project.category_quotas)
    if categories is not None:
        limits = {}
        for category, value in categories.items():
            if category not in LIMITED_CATEGORIES:
                raise InvalidInput(f"category {category!r} is not one of {', '.join(LIMITED_CATEGORIES)}")
            if value is not None:
                limits[category] = _checked(f"categories.{category}", value)
    kept = _attachment_bytes(project.category_quotas)
    if attachment_bytes != "keep":
        kept = checked_attachment_bytes(attachment_bytes)
    project.events_per_minute = events_per_minute
    project.category_quotas = {**limits, **({ATTACHMENT_BYTES: kept} if kept is not None else {})}
    record_activity(
        session,
        org_id,
        "project_quota.changed",
        "project",
        project_id,
        actor_user_id,
        {
            "project": project.slug,
            "events_per_minute": events_per_minute,
            "categories": limits,
            "attachment_bytes": kept,
        },
    )
    return ProjectQuota(project_id, events_per_minute, limits, kept)
