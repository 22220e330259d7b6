"""The demo's performance budgets: one passing, one failing and one without enough data, so the budgets
page shows every status, its margins and the 30-day charts over the backfilled history.

- LCP p75 over all pages, 7 days, at most 2.5 s (the web-vitals "good" limit): the demo's p75 is about
  1.7 s, a pass with room.
- JavaScript per page view, 7 days, at most 600,000 bytes (585.9 KiB): shop@1.4.0 loads 508 KiB of bundles
  and a 205 KiB analytics tag (713 KiB), a fail; the 30-day chart shows shop@1.3.0's heavy bundle (nearly
  1 MiB) the week before.
- INP p75 on /cart over one day from at least 20 interactions: only Chromium reports INP, and the cart sees
  about 6 of them a day (96 page loads a day, a fifth of them of the cart, a third from Chrome;
  demo.rates): not enough data for a p75, with the values still charted — a 7-day window would
  have them. This is what a budget on a quiet page looks like.

Safe to run again.
"""

from __future__ import annotations

from stacklens.control.budgets import find, import_budgets
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.performance.budget_rules import BudgetDefinition
from stacklens.settings import Settings

DEMO_BUDGETS = (
    BudgetDefinition("lcp_ms", "*", 2500.0, "p75", 7, 20),
    BudgetDefinition("js_bytes", "*", 600_000.0, "avg", 7, 20),
    BudgetDefinition("inp_ms", "/cart", 200.0, "p75", 1, 20),
)


def ensure_demo_budgets(settings: Settings, project_slug: str) -> int:
    """Create the demo budgets the project lacks (an existing one is left as the user changed it); how many
    were created."""
    with session_scope(settings) as session:
        project = project_by_slug(session, project_slug)
        missing = [d for d in DEMO_BUDGETS if find(session, project, d.metric, d.scope) is None]
        _, created = import_budgets(session, project, missing)
        return created
