"""User feedback and event attachments (docs/feedback.md): `GET /api/projects/{slug}/feedback`,
`GET /api/events/{event_id}/attachments` and the download of one attachment, always as a file
(`Content-Disposition: attachment`, never shown inline) and only to the event's organization."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.deps import ApiAuth, AppSettings, DbSession, ViewedProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import Project, iso_utc
from stacklens.feedback.attachment_files import (
    AttachmentRow,
    attachment,
    attachments_of_event,
    read_attachment,
)
from stacklens.feedback.downloads import download_headers
from stacklens.feedback.items import hex_id
from stacklens.feedback.listing import feedback_list

router = APIRouter(prefix="/api", tags=["feedback"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A filter cannot be read (the message names it)."},
    404: {"model": ErrorBody, "description": "No such project, event or attachment in this organization."},
}
NOT_FOUND = ApiError(404, "Not Found", "no such attachment in this organization")


class FeedbackOut(BaseModel):
    id: int
    source: str = Field(
        description="`feedback` (the widget), `user_report` or `dialog` (the crash-report dialog)."
    )
    name: str
    email: str = Field(description="The contact address as given, after the project's scrubbing.")
    message: str
    event_id: str | None = Field(description="The error the feedback speaks of (32 hex digits).")
    issue_id: str | None = Field(description="That error's issue (decimal string), once the event is stored.")
    replay_id: str | None
    url: str
    release: str
    environment: str
    received_at: str
    attachments: list[str] = Field(
        description="Ids of files sent with the feedback (the widget's screenshot)."
    )


class FeedbackList(BaseModel):
    rows: list[FeedbackOut]


class AttachmentOut(BaseModel):
    id: str
    event_id: str
    filename: str
    content_type: str = Field(
        description="As the SDK sent it; the download is always application/octet-stream."
    )
    attachment_type: str = Field(
        description="`event.attachment`, `event.minidump`, `event.view_hierarchy`, …"
    )
    size: int = Field(description="Bytes.")
    received_at: str
    url: str = Field(description="The download (`Content-Disposition: attachment`).")


class AttachmentList(BaseModel):
    rows: list[AttachmentOut]


def _flag(value: str | None, name: str) -> bool | None:
    if value is None or value == "":
        return None
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no"):
        return False
    raise ApiError(400, "Bad Request", f"{name}: give true or false")


@router.get("/projects/{slug}/feedback", response_model=FeedbackList, responses=ERRORS)
def list_feedback(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    project: ViewedProject,
    issue: str = "",
    release: str = "",
    has_replay: str | None = Query(default=None, alias="has-replay"),
    has_replay_underscore: str | None = Query(default=None, alias="has_replay", include_in_schema=False),
    limit: int = Query(default=100, ge=1, le=1000),
) -> FeedbackList:
    """The project's feedback, newest first: filter by `issue` (an issue id), `release` and `has-replay`."""
    if issue and not issue.isdigit():
        raise ApiError(400, "Bad Request", "issue: give an issue id (digits)")
    replay = _flag(has_replay if has_replay is not None else has_replay_underscore, "has-replay")
    items = feedback_list(
        db,
        client,
        auth.org_id,
        project.id,
        issue_id=int(issue) if issue else None,
        release=release,
        has_replay=replay,
        limit=limit,
    )
    return FeedbackList(
        rows=[
            FeedbackOut(
                id=i.row.id,
                source=i.row.source,
                name=i.row.name,
                email=i.row.email,
                message=i.row.message,
                event_id=i.row.event_id or None,
                issue_id=str(i.issue_id) if i.issue_id is not None else None,
                replay_id=i.row.replay_id or None,
                url=i.row.url,
                release=i.row.release,
                environment=i.row.environment,
                received_at=iso_utc(i.row.received_at),
                attachments=list(i.attachment_ids),
            )
            for i in items
        ]
    )


def _project_ids(db: DbSession, org_id: int) -> list[int]:
    return list(db.scalars(select(Project.id).where(Project.org_id == org_id)))


def _out(row: AttachmentRow) -> AttachmentOut:
    return AttachmentOut(
        id=row.id,
        event_id=row.event_id,
        filename=row.filename,
        content_type=row.content_type,
        attachment_type=row.attachment_type,
        size=row.size,
        received_at=iso_utc(row.received_at),
        url=f"/api/events/{row.event_id}/attachments/{row.id}",
    )


@router.get("/events/{event_id}/attachments", response_model=AttachmentList, responses=ERRORS)
def list_attachments(auth: ApiAuth, db: DbSession, event_id: str) -> AttachmentList:
    """The files sent with an event of the organization (none: an empty list); an id that is no event id
    (32 hex digits, dashes allowed) is a 400 naming it."""
    key = hex_id(event_id)
    if not key:
        raise ApiError(400, "Bad Request", "event_id: give an event id (32 hex digits)")
    rows = [r for p in _project_ids(db, auth.org_id) for r in attachments_of_event(db, auth.org_id, p, key)]
    return AttachmentList(rows=[_out(r) for r in rows])


@router.get(
    "/events/{event_id}/attachments/{attachment_id}",
    response_class=Response,
    responses={
        **ERRORS,
        200: {"content": {"application/octet-stream": {}}, "description": "The file, as a download."},
    },
)
def download_attachment(
    auth: ApiAuth, db: DbSession, settings: AppSettings, event_id: str, attachment_id: str
) -> Response:
    """One attachment's bytes, as a download; another organization's is 404."""
    key = hex_id(event_id)
    row = attachment(db, auth.org_id, _project_ids(db, auth.org_id), key, attachment_id) if key else None
    data = read_attachment(settings, auth.org_id, row) if row is not None else None
    if row is None or data is None:
        raise NOT_FOUND
    return Response(data, media_type="application/octet-stream", headers=download_headers(row))
