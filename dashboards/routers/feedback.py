"""User feedback pages (docs/feedback.md): the project's feedback list (filters: issue, release, has a
replay), the feedback and attachments beside an issue's event and a replay, and the download of an
attachment by signed-in members — always as a file (stacklens.feedback.downloads), never shown inline."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from stacklens.feedback.attachment_files import attachment, attachments_of_event, read_attachment
from stacklens.feedback.downloads import download_headers
from stacklens.feedback.items import hex_id
from stacklens.feedback.listing import FeedbackItem, feedback_list
from stacklens.issues.reads import issue_titles

router = APIRouter(include_in_schema=False)
PROJECT = "/orgs/{org_slug}/projects/{project_slug}"
LIMIT = 200


def _base(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}"


@router.get(PROJECT + "/feedback", response_class=HTMLResponse)
def feedback_page(
    request: Request, view: CurrentProject, db: Db, issue: str = "", release: str = "", replay: str = ""
) -> Response:
    error = ""
    if issue and not issue.strip().isdigit():
        error, issue = "Issue: give an issue id (digits).", ""
    has_replay = {"with": True, "without": False}.get(replay)
    items = feedback_list(
        db,
        view.warehouse,
        view.org_id,
        view.project_id,
        issue_id=int(issue) if issue else None,
        release=release.strip(),
        has_replay=has_replay,
        limit=LIMIT,
    )
    # Each feedback names its issue by title, as the issue list does (one read for the page's issues).
    issue_ids: list[int | str] = [item.issue_id for item in items if item.issue_id is not None]
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "items": items,
        "titles": issue_titles(view.warehouse, view.org_id, view.project_id, issue_ids),
        "filters": {
            "issue": issue,
            "release": release.strip(),
            "replay": replay if has_replay is not None else "",
        },
        "base": _base(view),
        "limit": LIMIT,
        "error": error,
    }
    return render(request, "feedback_list.html", context, 400 if error else 200)


def issue_feedback_context(
    view: CurrentProject, db: Db, issue_id: int, event_id: str | None
) -> dict[str, Any]:
    """The issue page's feedback and attachments: the issue's feedback, the shown event's files."""
    key = hex_id(event_id or "")
    return {
        "issue_feedback": feedback_list(
            db, view.warehouse, view.org_id, view.project_id, issue_id=issue_id, limit=50
        ),
        "event_attachments": attachments_of_event(db, view.org_id, view.project_id, key) if key else [],
        "feedback_base": _base(view),
    }


def replay_feedback(view: CurrentProject, db: Db, replay_id: str) -> list[FeedbackItem]:
    """The feedback sent during a replay (shown beside it)."""
    return feedback_list(
        db, view.warehouse, view.org_id, view.project_id, replay_id=hex_id(replay_id), limit=50
    )


@router.get(PROJECT + "/events/{event_id}/attachments/{attachment_id}")
def download(request: Request, view: CurrentProject, db: Db, event_id: str, attachment_id: str) -> Response:
    key = hex_id(event_id)
    row = attachment(db, view.org_id, [view.project_id], key, attachment_id) if key else None
    data = read_attachment(view.settings, view.org_id, row) if row is not None else None
    if row is None or data is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return Response(data, media_type="application/octet-stream", headers=download_headers(row))
