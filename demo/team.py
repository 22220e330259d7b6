"""The demo's team work: a team ``#payments`` with the demo organization's owners, and an ownership rule that
gives it the shop's payment code (``demo_shop/payments.py``, where *PaymentDeclined* is raised).

The rule covers the demo's whole history (90 days), so the pipeline's first every-minute run assigns the
payment issues of the backfill by it, exactly as it assigns a new issue: the issue page then says
"matched path:demo_shop/payments.py → #payments". Safe to run again (by name; a rule the user changed stays).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import Membership, Project, Team, User, utcnow
from stacklens.control.teams import create_team, set_members
from stacklens.issues.auto_assign import get_rules, set_rules
from stacklens.settings import Settings

TEAM = "payments"
RULES = "# The shop's payment code belongs to the payments team.\npath:demo_shop/payments.py #payments"
HISTORY = timedelta(days=90)


def ensure_demo_team(settings: Settings, project_slug: str) -> None:
    with session_scope(settings) as session:
        project = session.scalar(select(Project).where(Project.slug == project_slug))
        if project is None:
            return
        org_id = project.org_id
        if session.scalar(select(Team.id).where(Team.org_id == org_id, Team.slug == TEAM)) is None:
            create_team(session, org_id, TEAM, "Payments")
            owners = session.scalars(
                select(User.email)
                .join(Membership, Membership.user_id == User.id)
                .where(Membership.org_id == org_id, Membership.role == "owner")
            ).all()
            set_members(session, org_id, TEAM, list(owners))
        if not get_rules(session, org_id, project.id):
            set_rules(session, org_id, project, RULES, actor="demo", since=utcnow() - HISTORY)
