"""The demo's budgets: created once (a budget the user changed is left alone), valid definitions, one of each
status on demo-shaped traffic (see tests/dashboards/test_budgets_browser.py for them in the page)."""

from __future__ import annotations

from demo.budgets import DEMO_BUDGETS, ensure_demo_budgets
from stacklens.control.budgets import list_budgets, set_budget
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.performance.budget_rules import validate_budget


def test_demo_budgets_are_created_once_and_keep_user_changes(settings, make_org) -> None:
    slug = make_org("Demo")["project"]
    assert ensure_demo_budgets(settings, slug) == 3
    with session_scope(settings) as session:
        set_budget(session, project_by_slug(session, slug), "lcp_ms", "*", 4000)
    assert ensure_demo_budgets(settings, slug) == 0
    with session_scope(settings) as session:
        rows = {(r.metric, r.scope): r for r in list_budgets(session, project_by_slug(session, slug))}
    assert set(rows) == {(d.metric, d.scope) for d in DEMO_BUDGETS}
    assert rows[("lcp_ms", "*")].value == 4000
    for d in DEMO_BUDGETS:
        assert validate_budget(d.metric, d.scope, d.value, d.statistic, d.window_days, d.min_samples) == d
