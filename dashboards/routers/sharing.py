"""Share links: create (issue, one event, or a relative or absolute time range), revoke, and the read-only
shared page. The page shows what the link names and nothing more: one event; or the issue's events, only
inside the link's time range when it has one. It never shows user information, and request values were
filtered at ingest (see :mod:`stacklens.control.share_links` for tokens and states).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from itsdangerous import Signer

from dashboards.context import CurrentProject, Db, warehouse_of
from dashboards.figures import events_over_time_figure
from dashboards.rendering import render
from dashboards.routers.issue_detail import ISSUE, event_parts, load_issue
from dashboards.security import check_csrf
from stacklens.control import share_links
from stacklens.control.projects_settings import in_app_rules
from stacklens.issues import payload_view as ev
from stacklens.issues.events import EventRow, IssueEvents
from stacklens.issues.reads import RANGES, issue_summary, issue_titles
from stacklens.metrics import windows
from stacklens.sourcemaps.symbolicate import Resolver
from stacklens_contract.words import FILTERED

router = APIRouter(include_in_schema=False)
PROJECT_LIST_LIMIT = 200


def _signer(request: Request) -> Signer:
    return Signer(request.app.state.settings.secret(), salt="stacklens.share-link")


def _issue_path(view: CurrentProject, issue_id: int) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues/{issue_id}"


def _redact(value: Any, whole: set[str], inside: list[str]) -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, whole, inside) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, whole, inside) for v in value]
    if isinstance(value, str):
        if value in whole:
            return FILTERED
        for needle in inside:
            value = value.replace(needle, FILTERED)
    return value


def without_user(row: EventRow) -> EventRow:
    """The event with its user section dropped and the user's id, e-mail, name and IP address filtered
    wherever else they appear (frame variables, breadcrumbs, extra, tags): people's details stay inside the
    organization. Short values are filtered only as whole values, so an id like ``7`` cannot mangle text."""
    payload = ev.load_payload(row.get("payload", ""))
    user = payload.pop("user", None)
    values = {str(v) for v in (user.values() if isinstance(user, dict) else []) if isinstance(v, str | int)}
    columns: Mapping[str, object] = (
        row  # user columns, where a row carries them (events/get.sql selects none)
    )
    values |= {str(columns.get(k) or "") for k in ("user_id", "user_email", "user_name", "user_ip")}
    values.discard("")
    inside = sorted((v for v in values if len(v) >= 6), key=len, reverse=True)
    return {**row, "payload": json.dumps(_redact(payload, values, inside))}


@router.post(ISSUE + "/share", response_class=HTMLResponse)
def create_share(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    scope: Annotated[str, Form()] = "issue",
    event_id: Annotated[str, Form()] = "",
    range: Annotated[str, Form()] = "14d",
    range_from: Annotated[str, Form()] = "",
    range_to: Annotated[str, Form()] = "",
    expires: Annotated[int, Form()] = 7,
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    _, events = load_issue(view, issue_id)
    now = datetime.now(UTC)
    shared_event, window = None, None
    try:
        if scope == "event":
            row = events.get(event_id)
            if row is None:
                raise HTTPException(status_code=404, detail="Not Found")
            shared_event = row["event_id"]
        elif scope == "range":
            if range == "custom":
                window = share_links.absolute_range(range_from, range_to, now)
            elif range in RANGES:
                window = (now - RANGES[range], now)
            else:
                raise share_links.ShareRefused(f"range must be custom or one of {', '.join(RANGES)}")
        elif scope != "issue":
            raise share_links.ShareRefused("share the issue, one event or a time range")
        link, token = share_links.create_link(
            db,
            _signer(request),
            org_id=view.org_id,
            project_id=view.project_id,
            issue_id=issue_id,
            user_id=view.viewer.user.id,
            expires_days=expires,
            event_id=shared_event,
            window=window,
        )
    except share_links.ShareRefused as exc:
        return render(request, "error.html", {"title": "Cannot share", "message": str(exc)}, 400)
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "link": link,
        "url": share_links.share_url(request.app.state.settings, token),
        "issue_path": _issue_path(view, issue_id),
    }
    return render(request, "share_created.html", context)


@router.post(ISSUE + "/share/{link_id}/revoke")
def revoke_share(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    link_id: int,
    csrf_token: Annotated[str, Form()] = "",
    back: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if share_links.revoke_link(db, view.org_id, view.project_id, issue_id, link_id) is None:
        raise HTTPException(status_code=404, detail="Not Found")
    if back == "project":
        return RedirectResponse(_project_links_path(view) + "?done=share_revoked", status_code=303)
    return RedirectResponse(f"{_issue_path(view, issue_id)}?done=share_revoked#share-links", status_code=303)


def _project_links_path(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/share-links"


@router.get("/orgs/{org_slug}/projects/{project_slug}/share-links", response_class=HTMLResponse)
def project_share_links(request: Request, view: CurrentProject, db: Db, done: str = "") -> Response:
    """Every share link of the project (newest 200), with its issue, scope and state; active ones
    revocable."""
    links = share_links.issue_links(db, view.org_id, view.project_id, limit=PROJECT_LIST_LIMIT)
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "links": links,
        "titles": issue_titles(
            view.warehouse, view.org_id, view.project_id, [item.link.issue_id for item in links]
        ),
        "issues_path": f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues",
        "message": "Share link revoked: it no longer opens anything." if done == "share_revoked" else "",
    }
    return render(request, "share_links.html", context)


@router.get("/share/{token}", response_class=HTMLResponse)
def shared_page(request: Request, db: Db, token: str, event: str = "") -> Response:
    try:
        link = share_links.open_link(db, _signer(request), token)
    except share_links.LinkGone:
        message = "This share link has expired or was revoked. Ask for a new one."
        return render(request, "error.html", {"title": "Link no longer valid", "message": message}, 410)
    if link is None:
        raise HTTPException(status_code=404, detail="Not Found")
    issue_id = int(link.issue_id)
    client = warehouse_of(request)
    summary = issue_summary(client, link.org_id, link.project_id, issue_id)
    if summary is None:
        raise HTTPException(status_code=404, detail="Not Found")
    events = IssueEvents(client, link.org_id, link.project_id, issue_id, summary.get("fingerprint") or "")
    since = link.range_start.astimezone(UTC).replace(tzinfo=None) if link.range_start else None
    until = link.range_end.astimezone(UTC).replace(tzinfo=None) if link.range_end else None
    newer = older = None
    figure = None
    if link.event_id:
        # One event: no navigation, no chart, no totals — nothing about the issue's other events.
        if event and event.replace("-", "") != link.event_id:
            raise HTTPException(status_code=404, detail="Not Found")
        row = events.get(link.event_id)
    else:
        row = events.get(event) if event else events.get(events.latest(since, until) or "")
        if row is not None and since and until and not (since <= row["timestamp"] <= until):
            row = None
        if row is not None:
            newer, older = events.neighbours(row, since, until)
        # A range link charts its own range; others the issue page's default window
        # (stacklens.metrics.windows).
        chart_since, chart_until = windows.rolling(RANGES["14d"]).naive
        if until:
            chart_since, chart_until = since or until - RANGES["14d"], until
        figure = events_over_time_figure(events.over_time(chart_since, chart_until), chart_since, chart_until)
    if event and row is None:
        raise HTTPException(status_code=404, detail="Not Found")
    maps = Resolver(client, link.org_id, link.project_id)
    parts = event_parts(without_user(row), maps, in_app_rules(db, link.project_id)) if row else None
    context: dict[str, Any] = {
        "viewer": None,
        "user": None,
        "project": None,
        "issue": summary,
        "issue_path": f"/share/{token}",
        "list_path": "",
        "event": parts,
        "newer": newer,
        "older": older,
        "shared": True,
        # Issue-wide totals only for a link to the whole issue; a range or one event must not reveal them.
        "show_totals": not link.event_id and since is None,
        "shared_window": (link.range_start, link.range_end) if since else None,
        "figure": figure,
        "range": "",
        "ranges": [],
        "history": [],
        "history_next": None,
        "related": {},
        "reasons": {},
        "status_history": [],
        "share_links": [],
        "message": "",
    }
    return render(request, "issue_detail.html", context)
