"""The demo's dashboard: what an analyst builds first on this shop — release health and web vitals of the last
30 days, under one filter bar (production, every project). Four numbers with their change against the 30 days
before (crash-free sessions, LCP p75, INP p75, errors per 1,000 page loads), then per release over time
(crash-free sessions, LCP p75), the release health table beside the error rate per release, and the pages.

Every widget is an Explore question (views and inline queries), so its figures are the release and performance
pages' own. Made by name once; a dashboard the user changed (or deleted and made anew) is left alone.

The dashboard is also subscribed to, as a team would: its daily summary (key numbers and their change, with
the link) goes to the demo's webhook channel, the shop's inbox, at the first whole hour after the demo
starts, so the subscriptions list and the channel's delivery log show a real report within the hour."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from demo.alerts import CHANNEL_NAME
from stacklens.control.db import session_scope
from stacklens.control.models import AlertChannel, Dashboard, Project
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.subscriptions import create_subscription, list_subscriptions
from stacklens.settings import Settings

NAME = "Release health and vitals"
SLOWEST_PAGES_SQL = (Path(__file__).parent / "slowest_pages_panel.sql").read_text(encoding="utf-8").strip()


def _by_release(dataset: str, fn: str, metric: str) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "group_by": ["release"],
        "aggregates": [{"fn": fn, "metric": metric}],
        "interval": "1d",
        "order_by": "release",
    }


def demo_dashboard() -> dict[str, Any]:
    """The dashboard's body (what ``POST /api/dashboards`` takes)."""
    numbers = [
        ("Crash-free sessions", "releases.crash_free_sessions"),
        ("LCP p75", "performance.lcp"),
        ("INP p75", "performance.inp"),
        ("Errors per 1,000 page loads", "releases.errors_per_1k"),
    ]
    widgets: list[dict[str, Any]] = [
        {"title": title, "kind": "number", "view": view, "layout": {"x": 3 * i, "y": 0, "w": 3, "h": 1}}
        for i, (title, view) in enumerate(numbers)
    ]
    widgets += [
        {
            "title": "Crash-free sessions by release",
            "kind": "line",
            "query": _by_release("sessions", "avg", "crash_free_sessions"),
            "layout": {"x": 0, "y": 1, "w": 6, "h": 2},
        },
        {
            "title": "LCP p75 by release",
            "kind": "line",
            "query": _by_release("pageloads", "p75", "lcp_ms"),
            "layout": {"x": 6, "y": 1, "w": 6, "h": 2},
        },
        {
            "title": "Release health",
            "kind": "table",
            "view": "releases.health",
            "layout": {"x": 0, "y": 3, "w": 6, "h": 2},
        },
        {
            "title": "Errors per 1,000 page loads by release",
            "kind": "bar",
            "query": {**_by_release("errors", "rate_per_1k", ""), "interval": ""},
            "layout": {"x": 6, "y": 3, "w": 6, "h": 2},
        },
        {
            "title": "Pages",
            "kind": "table",
            "view": "performance.pages",
            "layout": {"x": 0, "y": 5, "w": 12, "h": 2},
        },
        {  # a SQL panel (docs/explore.md, "SQL panels"): the statement reads the window's parameters
            "title": "Slowest pages by LCP p75 (SQL)",
            "kind": "table",
            "sql": SLOWEST_PAGES_SQL,
            "layout": {"x": 0, "y": 7, "w": 12, "h": 2},
        },
    ]
    return {
        "name": NAME,
        "description": "Release health and web vitals of the last 30 days in production, each against the 30 days before.",
        "filters": {"range": "30d", "environment": "production", "release": "", "project": ""},
        "widgets": widgets,
    }


def ensure_demo_dashboard(settings: Settings, project_slug: str) -> bool:
    """Create the demo dashboard in the demo project's organization unless one of its name exists; whether
    made."""
    with session_scope(settings) as session:
        org_id = session.scalar(select(Project.org_id).where(Project.slug == project_slug))
        if org_id is None:
            return False
        existing = session.scalar(
            select(Dashboard.id).where(Dashboard.org_id == org_id, Dashboard.name == NAME)
        )
        if existing is not None:
            return False
        create_dashboard(session, org_id, demo_dashboard())
        return True


def ensure_demo_subscription(settings: Settings, project_slug: str, now: datetime | None = None) -> bool:
    """Subscribe the demo shop's inbox to the demo dashboard's daily summary unless the dashboard has a
    subscription; whether made. Needs the dashboard and the demo channel (made before it)."""
    now = now or datetime.now(UTC)
    with session_scope(settings) as session:
        org_id = session.scalar(select(Project.org_id).where(Project.slug == project_slug))
        board = session.scalar(select(Dashboard.id).where(Dashboard.org_id == org_id, Dashboard.name == NAME))
        channel = session.scalar(
            select(AlertChannel.id).where(AlertChannel.org_id == org_id, AlertChannel.name == CHANNEL_NAME)
        )
        if org_id is None or board is None or channel is None:
            return False
        if list_subscriptions(session, org_id, dashboard_id=board):
            return False
        first = (now + timedelta(hours=1)).astimezone(UTC)
        body = {
            "target": {"dashboard_id": board},
            "schedule": {"every": "day", "at": f"{first.hour:02d}:00", "timezone": "UTC"},
            "format": "summary",
            "channel_id": channel,
        }
        create_subscription(session, org_id, body, now=now)
        return True
