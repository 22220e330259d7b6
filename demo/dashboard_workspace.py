"""The demo's analyst workspace (issue 70): a second dashboard, "Shop pages", that uses what the first does
not — variables over the shop's pages and browsers (every widget follows them, and a link keeps them), a click
on a point or bar opening that slice (a page's vitals, an issue, Explore), a one-minute auto-refresh, and the
kinds beyond line, bar, number and table: LCP p75 as a gauge against the shop's LCP budget, page loads as an
area, page loads per browser as stacked bars, the pages' traffic against their LCP as a scatter, and the LCP
distribution over the window as a heat map; and a SQL panel (page loads and LCP p75 by browser) whose
statement follows ``$page``. Every other widget is an Explore question over the demo's own traffic, so each
figure is the performance pages' own. Made by name once; a dashboard the user changed is left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import Dashboard, Project
from stacklens.explore.dashboards import create_dashboard
from stacklens.settings import Settings

NAME = "Shop pages: variables and drill-down"
LOADS = {"dataset": "pageloads", "aggregates": [{"fn": "count"}], "interval": "1d"}
# A SQL panel following the $page variable (bound, never pasted; docs/explore.md, "SQL panels"), written as a
# member writes it in the editor and kept in its own file as every statement is.
BROWSERS_SQL = (Path(__file__).parent / "browsers_by_page_panel.sql").read_text(encoding="utf-8").strip()


def workspace_dashboard() -> dict[str, Any]:
    """The dashboard's body (what ``POST /api/dashboards`` takes)."""
    widgets: list[dict[str, Any]] = [
        {
            "title": "LCP p75 of $page against the budget",
            "kind": "gauge",
            "view": "performance.lcp",
            "layout": {"x": 0, "y": 0, "w": 4, "h": 2},
        },
        {"title": "Page loads", "kind": "area", "query": LOADS, "layout": {"x": 4, "y": 0, "w": 8, "h": 2}},
        {
            "title": "Page loads by browser",
            "kind": "stacked_bar",
            "query": {**LOADS, "group_by": ["browser"]},
            "layout": {"x": 0, "y": 2, "w": 6, "h": 2},
        },
        {
            "title": "Pages: traffic against LCP p75",
            "kind": "scatter",
            "query": {
                "dataset": "pageloads",
                "group_by": ["page"],
                "aggregates": [{"fn": "count"}, {"fn": "p75", "metric": "lcp_ms"}],
                "order_by": "-count",
                "limit": 20,
            },
            "layout": {"x": 6, "y": 2, "w": 6, "h": 2},
        },
        {
            "title": "LCP distribution (p50 to p99 per day)",
            "kind": "heatmap",
            "query": {
                "dataset": "pageloads",
                "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
                "interval": "1d",
            },
            "layout": {"x": 0, "y": 4, "w": 12, "h": 2},
        },
        {
            "title": "LCP p75 by page (click a bar: its vitals)",
            "kind": "bar",
            "query": {
                "dataset": "pageloads",
                "group_by": ["page"],
                "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
                "order_by": "-lcp_p75_ms",
                "limit": 10,
            },
            "layout": {"x": 0, "y": 6, "w": 6, "h": 2},
        },
        {
            "title": "Error events by issue (click a bar: the issue)",
            "kind": "bar",
            "query": {
                "dataset": "errors",
                "group_by": ["issue_id"],
                "aggregates": [{"fn": "count"}],
                "order_by": "-count",
                "limit": 10,
            },
            "layout": {"x": 6, "y": 6, "w": 6, "h": 2},
        },
        {
            "title": "Page loads and LCP p75 by browser (SQL)",
            "kind": "table",
            "sql": BROWSERS_SQL,
            "layout": {"x": 0, "y": 8, "w": 12, "h": 2},
        },
    ]
    return {
        "name": NAME,
        "description": "The shop's pages over the last 7 days: choose a page and a browser above, click a point to open it.",
        "filters": {"range": "7d", "environment": "production", "release": "", "project": ""},
        "variables": [{"name": "page", "column": "page"}, {"name": "browser", "column": "browser"}],
        "refresh": "1m",
        "widgets": widgets,
    }


def ensure_workspace_dashboard(settings: Settings, project_slug: str) -> bool:
    """Create the workspace dashboard in the demo project's organization unless one of its name exists;
    whether made."""
    with session_scope(settings) as session:
        org_id = session.scalar(select(Project.org_id).where(Project.slug == project_slug))
        if org_id is None:
            return False
        existing = session.scalar(
            select(Dashboard.id).where(Dashboard.org_id == org_id, Dashboard.name == NAME)
        )
        if existing is not None:
            return False
        create_dashboard(session, org_id, workspace_dashboard())
        return True
