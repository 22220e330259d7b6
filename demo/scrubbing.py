"""The demo project's data scrubbing rules (docs/scrubbing.md): the shop sends each signed-in customer's
e-mail with every event (``user.email``); the demo hashes it, so the issue pages count and tell customers
apart without showing an address, and masks any other e-mail address in the events, transactions and log
records the shop sends (a receipt's recipient in an error message, a checkout body).

Set once: a project whose scrubbing rules were ever changed (by anyone, in its activity log) is left as it is.
"""

from __future__ import annotations

from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from stacklens.control.projects import project_by_slug
from stacklens.scrubbing.rules import RuleSpec
from stacklens.scrubbing.store import set_rules
from stacklens.settings import Settings

DEMO_RULES = (
    RuleSpec("hash", "email", None, "user.email"),
    RuleSpec("mask", "email", None, "$string && !user.email"),
)


def ensure_demo_scrubbing(settings: Settings, project_slug: str) -> bool:
    """Set the demo rules unless the project's rules were ever changed; whether they were set now."""
    with session_scope(settings) as session:
        project = project_by_slug(session, project_slug)
        changed = session.scalar(
            select(ActivityEntry.id).where(
                ActivityEntry.org_id == project.org_id,
                ActivityEntry.action == "scrubbing.changed",
                ActivityEntry.target_id == project.id,
            )
        )
        if changed is not None:
            return False
        set_rules(session, project.org_id, project, DEMO_RULES)
        return True
