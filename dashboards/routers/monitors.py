"""The monitors pages of a project (docs/monitors.md), after Sentry's Crons and Uptime: the list (status,
schedule in words, next expected run, last check-in, a 30-day timeline) with a form for a new monitor, and
one monitor's page (its check-ins with durations, its incidents, for an uptime check the uptime per day),
where it is paused, resumed or deleted. The numbers come from stacklens.monitors, as the API's do."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.models import utcnow
from stacklens.errors import Conflict
from stacklens.monitors import reads, store
from stacklens.monitors.errors import MonitorInputError, MonitorNotFound
from stacklens.monitors.uptime_reads import recent_checks, uptime_daily
from stacklens.outbound import AllowList

router = APIRouter(include_in_schema=False)
BASE = "/orgs/{org_slug}/projects/{project_slug}/monitors"
TIMELINE_DAYS = 30
FORM_FIELDS = ("kind", "slug", "name", "schedule", "timezone", "checkin_margin", "max_runtime", "url")


def monitors_path(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/monitors"


def _context(view: CurrentProject) -> dict[str, Any]:
    return {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "base_path": monitors_path(view),
    }


def _list_page(
    request: Request, view: CurrentProject, db: Db, values: dict[str, str], error: str = "", status: int = 200
) -> Response:
    monitors = store.list_monitors(db, view.project)
    timelines = reads.daily_timeline(db, [m.id for m in monitors if m.kind == "cron"], TIMELINE_DAYS)
    for m in monitors:
        if m.kind == "uptime":  # its probes are in the warehouse
            daily = uptime_daily(view.warehouse, view.org_id, view.project_id, m.id, TIMELINE_DAYS)
            timelines[m.id] = [
                (day, _probe_counts(row) if row else {}) for day, row in _uptime_days(daily, TIMELINE_DAYS)
            ]
    rows = [
        {
            **store.monitor_out(m, view.project.slug),
            "timeline": [(day, reads.worst(counts), counts) for day, counts in timelines[m.id]],
        }
        for m in monitors
    ]
    context = _context(view)
    context.update(rows=rows, values=values, error=error, days=TIMELINE_DAYS)
    return render(request, "monitors.html", context, status)


@router.get(BASE, response_class=HTMLResponse)
def monitor_list(request: Request, view: CurrentProject, db: Db) -> Response:
    defaults = {"kind": "cron", "timezone": "UTC", "checkin_margin": "1", "max_runtime": "30"}
    return _list_page(request, view, db, {k: defaults.get(k, "") for k in FORM_FIELDS})


def _body(values: dict[str, str]) -> dict[str, Any]:
    """The API's body from the form: empty fields are left out (their defaults apply)."""
    body: dict[str, Any] = {k: v for k, v in values.items() if v and k != "schedule"}
    if values["kind"] == "cron":
        body.pop("url", None)
        if values["schedule"]:
            body["schedule"] = values["schedule"]
    else:
        for field in ("timezone", "checkin_margin", "max_runtime"):
            body.pop(field, None)
    return body


@router.post(BASE, response_class=HTMLResponse)
async def create(request: Request, view: CurrentProject, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    values = {k: str(form.get(k) or "").strip() for k in FORM_FIELDS}
    allow = AllowList.parse(view.settings.outbound_allow)
    try:
        monitor = store.create_monitor(db, view.project, _body(values), allow)
    except (MonitorInputError, Conflict) as exc:
        db.rollback()
        return _list_page(request, view, db, values, str(exc), 400)
    return RedirectResponse(f"{monitors_path(view)}/{monitor.slug}", status_code=303)


def _monitor(view: CurrentProject, db: Db, slug: str) -> Any:
    try:
        return store.get_monitor(db, view.project, slug)
    except MonitorNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc


def _probe_counts(row: dict[str, Any]) -> dict[str, int]:
    """A day of probes as counts of ok and down (the timeline colours a day as it colours check-ins)."""
    ok = round(row["probes"] * row["uptime_pct"] / 100)
    return {"ok": ok, "down": row["probes"] - ok}


def _uptime_days(rows: list[dict[str, Any]], days: int) -> list[tuple[date, dict[str, Any] | None]]:
    """Every day of the window, with its figures or None (no probe: drawn as no data, never as 0 %)."""
    by_day = {r["day"]: r for r in rows}
    today = utcnow().date()
    return [(d, by_day.get(d)) for d in (today - timedelta(days=days - 1 - i) for i in range(days))]


@router.get(BASE + "/{monitor_slug}", response_class=HTMLResponse)
def monitor_page(request: Request, view: CurrentProject, db: Db, monitor_slug: str) -> Response:
    monitor = _monitor(view, db, monitor_slug)
    context = _context(view)
    uptime = (
        _uptime_days(
            uptime_daily(view.warehouse, view.org_id, view.project_id, monitor.id, TIMELINE_DAYS),
            TIMELINE_DAYS,
        )
        if monitor.kind == "uptime"
        else []
    )
    checkins = reads.checkins(db, monitor, 100)
    probes = (
        recent_checks(view.warehouse, view.org_id, view.project_id, monitor.id)
        if monitor.kind == "uptime"
        else []
    )
    durations = [c["duration_ms"] for c in checkins if c["duration_ms"] is not None]
    context.update(
        monitor=store.monitor_out(monitor, view.project.slug),
        checkins=checkins,
        incidents=reads.incidents(db, monitor),
        uptime=uptime,
        probes=probes,
        longest=max(durations) if durations else None,
        issues_link=(
            f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues"
            f"?query=monitor.slug%3A{monitor.slug}"
        ),
    )
    return render(request, "monitor_detail.html", context)


@router.post(BASE + "/{monitor_slug}/pause", response_class=HTMLResponse)
async def pause(request: Request, view: CurrentProject, db: Db, monitor_slug: str) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    monitor = _monitor(view, db, monitor_slug)
    paused = str(form.get("paused") or "") == "true"
    store.update_monitor(db, monitor, {"paused": paused}, AllowList.parse(view.settings.outbound_allow))
    return RedirectResponse(f"{monitors_path(view)}/{monitor.slug}", status_code=303)


@router.post(BASE + "/{monitor_slug}/delete", response_class=HTMLResponse)
async def delete(request: Request, view: CurrentProject, db: Db, monitor_slug: str) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    store.delete_monitor(db, _monitor(view, db, monitor_slug))
    return RedirectResponse(monitors_path(view), status_code=303)
