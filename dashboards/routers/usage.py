"""The organization's usage page (`/orgs/{org}/usage`): what became of every item its SDKs sent — accepted,
filtered, rate limited, invalid, too large, or dropped by the SDK itself — per hour and by reason, for one
project and category or all (the outcomes of docs/architecture.md §5, the same rows as `GET
/api/outcomes`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import Db, OrgViewer, app_settings, org_projects, warehouse_of
from dashboards.rendering import render
from dashboards.usage_figures import OUTCOME_LABELS, outcomes_figure
from stacklens.errors import InvalidInput
from stacklens.outcomes.counting import CATEGORIES
from stacklens.outcomes.reads import RANGES, OutcomeQuery, by_reason, outcome_rows, totals_by_outcome
from stacklens.outcomes.reasons import explain

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/usage"


@router.get(PAGE, response_class=HTMLResponse)
def usage_page(
    request: Request, viewer: OrgViewer, db: Db, project: str = "", category: str = "", range: str = "24h"
) -> Response:
    projects = org_projects(db, viewer.org.id)
    slugs = {p.id: p.slug for p in projects}
    chosen = next((p for p in projects if p.slug == project), None)
    context: dict[str, Any] = {
        "viewer": viewer,
        "user": viewer.user,
        "projects": projects,
        "categories": CATEGORIES,
        "ranges": list(RANGES),
        "chosen": {"project": chosen.slug if chosen else "", "category": category, "range": range},
        "labels": OUTCOME_LABELS,
        "error": "",
        "chart": None,
        "totals": {},
        "reasons": [],
    }
    now = datetime.now(UTC)
    try:
        if project and chosen is None:
            raise InvalidInput(f"no project {project!r} in this organization")
        query = OutcomeQuery(range, chosen.id if chosen else 0, category).checked()
        rows = outcome_rows(app_settings(request), warehouse_of(request), viewer.org.id, query, slugs, now)
    except InvalidInput as exc:
        context["error"] = str(exc)
        return render(request, "usage.html", context, 400)
    since = now - RANGES[query.range]
    context.update(
        chart=outcomes_figure(rows, since, now + timedelta(minutes=5)) if rows else None,
        totals=totals_by_outcome(rows),
        reasons=[(outcome, cat, reason, n, explain(reason)) for outcome, cat, reason, n in by_reason(rows)],
        has_sessions=any(row.category == "session" for row in rows),
        total=sum(row.quantity for row in rows),
    )
    return render(request, "usage.html", context)
