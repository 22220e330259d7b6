"""Budgets in the control store (``stacklens/control/budgets.py``): created, changed, listed and deleted per
project; looked up only inside the caller's organization; invalid ones refused before anything is stored.

Named apart from tests/stacklens/cli/test_budgets.py while pytest imports test modules by basename."""

from __future__ import annotations

import pytest

from stacklens.control import budgets
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.performance.budget_rules import BudgetError
from stacklens.settings import Settings


def test_budget_lifecycle_and_isolation(control_settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other", project="Other App")
    with session_scope(control_settings) as session:
        project = project_by_slug(session, str(acme["project"]))
        row = budgets.create_budget(session, project, "lcp_ms", "/checkout", 2500)
        assert (row.project, row.metric, row.scope, row.value) == (
            acme["project"],
            "lcp_ms",
            "/checkout",
            2500,
        )
        assert row.unit == "ms" and row.org_id == acme["org_id"]
        with pytest.raises(BudgetError):
            budgets.create_budget(
                session, project, "lcp_ms", "/checkout", 1
            )  # one budget per metric and scope
        same, created = budgets.set_budget(session, project, "lcp_ms", "/checkout", 2000)
        assert not created and same.id == row.id and same.value == 2000
        js, created = budgets.set_budget(session, project, "js_bytes", "*", 300_000)
        assert created
        assert [(b.metric, b.scope) for b in budgets.list_budgets(session, project)] == [
            ("js_bytes", "*"),
            ("lcp_ms", "/checkout"),
        ]
        assert budgets.budget_in_org(session, js.id, int(acme["org_id"])) is not None
        assert budgets.budget_in_org(session, js.id, int(other["org_id"])) is None  # not theirs: not found
        assert budgets.delete_budget(session, project, "js_bytes", "*") is True
        assert budgets.delete_budget(session, project, "js_bytes", "*") is False
        with pytest.raises(BudgetError, match="unknown metric"):
            budgets.set_budget(session, project, "speed", "*", 1)
        assert [b.id for b in budgets.list_budgets(session, project)] == [row.id]
