"""Session replay pages: the project's replays with filters, the player with its timeline and breadcrumbs,
the recording it plays, and the project setting that turns replay ingest off."""

from __future__ import annotations

from datetime import UTC
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.routers.feedback import replay_feedback
from dashboards.security import check_csrf
from stacklens.control.projects_settings import set_replay_enabled
from stacklens.errors import InvalidInput
from stacklens.replay import reads
from stacklens.replay.timeline import error_marks, read_marks
from stacklens.traces.links import replay_traces

router = APIRouter(include_in_schema=False)
BASE = "/orgs/{org_slug}/projects/{project_slug}/replays"


def _base(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}"


def _replay(view: CurrentProject, replay_id: str) -> tuple[str, reads.ReplaySpan]:
    """The replay's UUID and span; 404 for a malformed id, a replay of another project or organization,
    or one that has no segment, alike."""
    replay = reads.replay_uuid(replay_id)
    span = None if replay is None else reads.replay_span(view.warehouse, view.org_id, view.project_id, replay)
    if replay is None or span is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return replay, span


@router.get(BASE, response_class=HTMLResponse)
def replay_list(
    request: Request,
    view: CurrentProject,
    range: str = "7d",
    browser: str = "",
    user: str = "",
    url: str = "",
    errors: str = "",
    min_duration: str = "0",
    release: str = "",
) -> Response:
    error = ""
    try:
        seconds = int(min_duration or "0")
    except ValueError:
        seconds, error = 0, "min_duration must be a whole number of seconds"
    filters = reads.ReplayFilters(
        range, browser.strip(), user.strip(), url.strip(), errors == "1", seconds, release.strip()
    )
    try:
        rows = [] if error else reads.list_replays(view.warehouse, view.org_id, view.project_id, filters)
    except InvalidInput as exc:
        rows, error = [], str(exc)
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "rows": rows,
        "filters": filters,
        "ranges": list(reads.RANGES),
        "limit": reads.LIST_LIMIT,
        "base": _base(view),
        "error": error,
    }
    return render(request, "replay_list.html", context, 400 if error else 200)


@router.get(BASE + "/{replay_id}", response_class=HTMLResponse)
def replay_page(request: Request, view: CurrentProject, db: Db, replay_id: str, t: str = "0") -> Response:
    replay, span = _replay(view, replay_id)
    client = view.warehouse
    meta = reads.replay_meta(client, view.org_id, view.project_id, replay)
    # The player's clock starts at the first rrweb event: the segments' earliest time (kept in ms).
    first_ms = span["started"].replace(tzinfo=UTC).timestamp() * 1000.0
    duration = max(0.0, (span["ended"] - span["started"]).total_seconds())
    marks = read_marks(reads.replay_marks(client, view.org_id, view.project_id, replay), first_ms)
    errors = reads.replay_errors(
        client, view.org_id, view.project_id, replay, span, meta.get("error_ids") or []
    )
    marks = sorted([*marks, *error_marks(errors, first_ms, _base(view))], key=lambda m: m.offset)
    try:
        start = min(max(0.0, float(t)), duration)
    except ValueError:
        start = 0.0
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "replay_id": replay.replace("-", ""),
        "span": span,
        "meta": meta,
        "replay_user": reads.replay_user(client, view.org_id, view.project_id, meta, span),
        "duration": duration,
        "marks": marks,
        "errors": errors,
        "start": start,
        "playable": bool(span["snapshots"]),
        "recording_url": f"{_base(view)}/replays/{replay.replace('-', '')}/recording.json",
        "base": _base(view),
        "feedback": replay_feedback(view, db, replay),
        "traces": replay_traces(client, view.org_id, view.project_id, replay),
    }
    return render(request, "replay.html", context)


@router.get(BASE + "/{replay_id}/recording.json")
def replay_recording(view: CurrentProject, replay_id: str) -> Response:
    """The rrweb events the player plays (already scrubbed at ingest; the SDK's masking kept)."""
    replay, _ = _replay(view, replay_id)
    body = reads.recording_json(view.warehouse, view.org_id, view.project_id, replay)
    return Response(body, media_type="application/json", headers={"Cache-Control": "private, max-age=300"})


@router.post("/orgs/{org_slug}/projects/{project_slug}/settings/replays")
def replay_setting(
    request: Request,
    view: CurrentProject,
    db: Db,
    enabled: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    if enabled not in ("0", "1"):
        return render(
            request, "error.html", {"title": "Replay setting", "message": "enabled must be 0 or 1"}, 400
        )
    set_replay_enabled(db, view.org_id, view.project_id, enabled == "1")
    db.commit()
    return RedirectResponse(f"{_base(view)}/settings", status_code=303)
