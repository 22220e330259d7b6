"""Share links (signed, expiring, revocable, read-only) and event downloads (JSON, CSV).

A share link's token is a random value signed with the server secret; the control store keeps only its
SHA-256, so a leaked database cannot be turned into working links. The shared page shows what the link
names and nothing more: one event; or the issue's events, only inside the link's time range when it has one.
It never shows user information, and request values were filtered at ingest.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from itsdangerous import BadSignature, Signer
from sqlalchemy import select

from dashboards import event_view as ev
from dashboards.context import CurrentProject, Db
from dashboards.event_queries import IssueEvents
from dashboards.figures import events_over_time_figure
from dashboards.issue_queries import RANGES, issue_summary
from dashboards.rendering import render
from dashboards.routers.issue_detail import ISSUE, event_parts, load_issue
from dashboards.security import check_csrf
from stacklens.control.models import ShareLink

router = APIRouter(include_in_schema=False)
EXPIRY_DAYS = (1, 7, 30)


def _signer(request: Request) -> Signer:
    return Signer(request.app.state.settings.secret(), salt="stacklens.share-link")


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _base_url(request: Request) -> str:
    public = request.app.state.settings.public_url
    return public.rstrip("/") if public else str(request.base_url).rstrip("/")


@router.post(ISSUE + "/share", response_class=HTMLResponse)
def create_share(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    scope: Annotated[str, Form()] = "issue",
    event_id: Annotated[str, Form()] = "",
    range: Annotated[str, Form()] = "14d",
    expires: Annotated[int, Form()] = 7,
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    _, events = load_issue(view, issue_id)
    if scope not in ("issue", "event", "range") or expires not in EXPIRY_DAYS or range not in RANGES:
        return render(
            request,
            "error.html",
            {"title": "Cannot share", "message": "Choose what to share and for how long."},
            400,
        )
    now = datetime.now(UTC)
    link = ShareLink(
        org_id=view.org_id,
        project_id=view.project_id,
        issue_id=str(issue_id),
        created_by_user_id=view.viewer.user.id,
        expires_at=now + timedelta(days=expires),
    )
    if scope == "event":
        row = events.get(event_id)
        if row is None:
            raise HTTPException(status_code=404, detail="Not Found")
        link.event_id = row["event_id"].replace("-", "")
    if scope == "range":
        link.range_start, link.range_end = now - RANGES[range], now
    token = _signer(request).sign(secrets.token_urlsafe(24)).decode()
    link.token_hash = _hash(token)
    db.add(link)
    db.flush()
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "link": link,
        "url": f"{_base_url(request)}/share/{token}",
        "issue_path": f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues/{issue_id}",
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
) -> Response:
    check_csrf(request, csrf_token)
    link = db.execute(
        select(ShareLink).where(
            ShareLink.id == link_id, ShareLink.org_id == view.org_id, ShareLink.project_id == view.project_id
        )
    ).scalar_one_or_none()
    if link is None:
        raise HTTPException(status_code=404, detail="Not Found")
    link.revoked_at = datetime.now(UTC)
    return render(
        request,
        "error.html",
        {"title": "Share link revoked", "message": "The link no longer opens anything."},
    )


def _open_link(request: Request, db: Db, token: str) -> ShareLink:
    try:
        _signer(request).unsign(token)
    except BadSignature:
        raise HTTPException(status_code=404, detail="Not Found") from None
    link = db.execute(select(ShareLink).where(ShareLink.token_hash == _hash(token))).scalar_one_or_none()
    now = datetime.now(UTC)
    if (
        link is None
        or link.revoked_at is not None
        or link.expires_at.replace(tzinfo=link.expires_at.tzinfo or UTC) <= now
    ):
        raise HTTPException(status_code=404, detail="Not Found")
    return link


@router.get("/share/{token}", response_class=HTMLResponse)
def shared_page(request: Request, db: Db, token: str, event: str = "") -> Response:
    link = _open_link(request, db, token)
    issue_id = int(link.issue_id)
    summary = issue_summary(link.org_id, link.project_id, issue_id)
    if summary is None:
        raise HTTPException(status_code=404, detail="Not Found")
    events = IssueEvents(link.org_id, link.project_id, issue_id, summary.get("fingerprint") or "")
    since = link.range_start.replace(tzinfo=None) if link.range_start else None
    until = link.range_end.replace(tzinfo=None) if link.range_end else None
    newer = older = None
    if link.event_id:
        row = events.get(link.event_id)
    else:
        row = events.get(event) if event else events.get(events.latest(since, until) or "")
        if row is not None and since and not (since <= row["timestamp"] <= until):
            row = None
        if row is not None:
            newer, older = events.neighbours(row, since, until)
    if event and row is None:
        raise HTTPException(status_code=404, detail="Not Found")
    parts = event_parts(row) if row else None
    if parts:
        parts["user_info"] = None  # people's details stay inside the organization
    chart_until = until or datetime.now(UTC).replace(tzinfo=None)
    chart_since = since or chart_until - RANGES["14d"]
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
        "figure": events_over_time_figure(
            events.over_time(chart_since, chart_until), chart_since, chart_until
        ),
        "range": "14d",
        "ranges": [],
        "history": [],
        "history_next": None,
        "related": {},
        "reasons": {},
        "status_history": [],
        "message": "",
    }
    return render(request, "issue_detail.html", context)


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in _flatten(v, f"{prefix}[{i}]")]
    return [(prefix, "" if value is None else str(value))]


@router.get(ISSUE + "/events/{event_id}.{fmt}")
def download_event(view: CurrentProject, issue_id: int, event_id: str, fmt: str) -> Response:
    _, events = load_issue(view, issue_id)
    row = events.get(event_id)
    if row is None or fmt not in ("json", "csv"):
        raise HTTPException(status_code=404, detail="Not Found")
    document = {
        "event_id": row["event_id"],
        "issue_id": issue_id,
        "timestamp": row["timestamp"].isoformat() + "Z",
        "received_at": row["received_at"].isoformat() + "Z",
        "payload": ev.load_payload(row["payload"]),
    }
    name = f"event-{row['event_id']}.{fmt}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if fmt == "json":
        return Response(json.dumps(document, indent=2), media_type="application/json", headers=headers)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["field", "value"])
    for key, value in _flatten(document):
        # A leading =, +, - or @ would make a spreadsheet run the cell as a formula (CSV injection).
        writer.writerow([key, f"'{value}" if value[:1] in ("=", "+", "-", "@") else value])
    return Response(buffer.getvalue(), media_type="text/csv", headers=headers)
