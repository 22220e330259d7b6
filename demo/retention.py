"""The demo project's event cap: at most 5,000 error events kept per issue, as a Bugsink or GlitchTip install
would keep, so the project settings page and the operators' page show a cap and the daily retention run
applies it (each run in the maintenance log says how many events it removed: none while no issue holds more).

Set once: a project whose caps were ever changed (by anyone, in its activity log) is left as it is.
"""

from __future__ import annotations

from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from stacklens.control.project_retention import set_event_caps
from stacklens.control.projects import project_by_slug
from stacklens.settings import Settings

DEMO_MAX_EVENTS_PER_ISSUE = 5_000


def ensure_demo_event_caps(settings: Settings, project_slug: str) -> bool:
    """Set the demo cap unless the project's caps were ever changed; whether it was set now."""
    with session_scope(settings) as session:
        project = project_by_slug(session, project_slug)
        changed = session.scalar(
            select(ActivityEntry.id).where(
                ActivityEntry.org_id == project.org_id,
                ActivityEntry.action == "project_event_caps.changed",
                ActivityEntry.target_id == project.id,
            )
        )
        if changed is not None:
            return False
        set_event_caps(session, project.org_id, project.id, DEMO_MAX_EVENTS_PER_ISSUE, None)
        return True
