"""The demo's budgets fill the budgets in the PDF report: set once, never duplicated, a changed value kept."""

from __future__ import annotations

from stacklens.control import budgets
from stacklens.control.accounts import project_by_slug
from stacklens.control.db import session_scope
from stacklens.demo.org import DEMO_BUDGETS, ensure_demo_org


def test_demo_budgets_are_set_once(settings) -> None:
    demo = ensure_demo_org(settings)
    with session_scope(settings) as session:
        project = project_by_slug(session, demo.project)
        rows = budgets.list_budgets(session, project)
        assert sorted((r.metric, r.scope, r.value) for r in rows) == sorted(DEMO_BUDGETS)
        budgets.set_budget(session, project, "lcp_ms", "*", 3000)
    ensure_demo_org(settings)
    with session_scope(settings) as session:
        rows = budgets.list_budgets(session, project_by_slug(session, demo.project))
    assert len(rows) == len(DEMO_BUDGETS)
    assert next(r.value for r in rows if r.metric == "lcp_ms") == 3000
