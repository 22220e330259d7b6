"""The budget table: a row's defaults, and a project's budgets deleted with it."""

from __future__ import annotations

from sqlalchemy import delete, select

from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.budgets import Budget
from stacklens.settings import Settings


def test_defaults_and_the_projects_budgets_going_with_it(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    with session_scope(settings) as session:
        rows = [
            Budget(org_id=org["org_id"], project_id=org["project_id"], metric="lcp_ms", value=2500.0)
            for org in (acme, other)
        ]
        session.add_all(rows)
        session.flush()
        budget = rows[0]
        assert (budget.scope, budget.statistic, budget.window_days, budget.min_samples) == ("*", "p75", 7, 20)
        assert (budget.last_error, budget.failures, budget.retry_at) == ("", 0, None)
    with session_scope(settings) as session:
        session.execute(delete(Project).where(Project.id == acme["project_id"]))
    with session_scope(settings) as session:
        assert session.scalars(select(Budget.project_id)).all() == [other["project_id"]]
