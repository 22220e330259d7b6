"""The demo's performance budgets: one passing, one failing and one without enough data, so the budgets
page shows every status, its margins and the 30-day charts over the backfilled history.

LCP over all pages stays far under 10 s (pass); every page view loads the bundles and a 210 KB analytics tag,
over the 250 KB JavaScript budget (fail); INP on the cart is judged over one day from 50,000 interactions,
more than a day of the demo's live traffic brings (at most ~2 page loads a second, a fifth of them of the
cart, a third of those from Chrome, the one browser reporting INP): insufficient data, with the values still
charted. Safe to run again.
"""

from __future__ import annotations

from stacklens.control import accounts
from stacklens.control.budgets import find, import_budgets
from stacklens.control.db import session_scope
from stacklens.performance.budget_rules import BudgetDefinition
from stacklens.settings import Settings

DEMO_BUDGETS = (
    BudgetDefinition("lcp_ms", "*", 10_000.0, "p75", 7, 20),
    BudgetDefinition("js_bytes", "*", 250 * 1024.0, "avg", 7, 20),
    BudgetDefinition("inp_ms", "/cart", 200.0, "p75", 1, 50_000),
)


def ensure_demo_budgets(settings: Settings, project_slug: str) -> int:
    """Create the demo budgets the project lacks (an existing one is left as the user changed it); how many
    were created."""
    with session_scope(settings) as session:
        project = accounts.project_by_slug(session, project_slug)
        missing = [d for d in DEMO_BUDGETS if find(session, project, d.metric, d.scope) is None]
        _, created = import_budgets(session, project, missing)
        return created
