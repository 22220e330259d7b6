"""Comments on an issue (docs/issues.md): list, add, edit and delete one's own. Bearer API key; a comment made
with a key is by ``api:<key id>`` and only that key may change it. Another organization's issue answers
404."""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from api.deps import ApiAuth, AppSettings, DbSession, Warehouse
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.issues_api import issue_of
from stacklens.control.models import iso_utc
from stacklens.issues.comments import (
    MAX_BODY,
    CommentRow,
    add_comment,
    delete_comment,
    edit_comment,
    list_comments,
)
from stacklens.issues.notifications import notifier_for

router = APIRouter(prefix="/api", tags=["issues"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "The body is empty or too long."},
    403: {"model": ErrorBody, "description": "The comment is someone else's."},
    404: {"model": ErrorBody, "description": "No such issue or comment in this organization."},
}


class CommentIn(BaseModel):
    body: str = Field(description=f"Markdown (raw HTML is shown as text), 1 to {MAX_BODY:,} characters.")


class CommentOut(BaseModel):
    id: int
    issue_id: str
    author: str = Field(
        description="The author's e-mail, or `api:<key id>` for a comment made with an API key."
    )
    body: str = Field(description="The markdown as written.")
    html: str = Field(description="The markdown rendered (no HTML of the author's; links rel=noopener).")
    mentions: list[str] = Field(description="E-mails of the members the comment mentions with @name.")
    created_at: str
    edited_at: str | None


class CommentList(BaseModel):
    comments: list[CommentOut]


def _out(row: CommentRow) -> CommentOut:
    return CommentOut(
        id=row.id,
        issue_id=str(row.issue_id),
        author=row.author,
        body=row.body,
        html=row.html,
        mentions=list(row.mentions),
        created_at=iso_utc(row.created_at),
        edited_at=iso_utc(row.edited_at) if row.edited_at else None,
    )


@router.get("/issues/{issue_id}/comments", response_model=CommentList, responses=ERRORS)
def issue_comments(auth: ApiAuth, db: DbSession, client: Warehouse, issue_id: str) -> CommentList:
    """The issue's comments, oldest first."""
    project, _ = issue_of(auth, db, client, issue_id)
    return CommentList(comments=[_out(c) for c in list_comments(db, auth.org_id, project.id, int(issue_id))])


@router.post("/issues/{issue_id}/comments", response_model=CommentOut, status_code=201, responses=ERRORS)
def post_comment(
    auth: ApiAuth, db: DbSession, client: Warehouse, settings: AppSettings, issue_id: str, comment: CommentIn
) -> CommentOut:
    """Add a comment; members it mentions with `@name` are notified."""
    project, _ = issue_of(auth, db, client, issue_id)
    row = add_comment(
        db,
        auth.org_id,
        project.id,
        int(issue_id),
        comment.body,
        author=f"api:{auth.api_key_id}",
        author_user_id=None,
        notifier=notifier_for(settings, client),
    )
    return _out(row)


@router.put("/issues/{issue_id}/comments/{comment_id}", response_model=CommentOut, responses=ERRORS)
def put_comment(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    settings: AppSettings,
    issue_id: str,
    comment_id: int,
    comment: CommentIn,
) -> CommentOut:
    """Change the text of a comment this key made; members the edit mentions for the first time are
    notified."""
    project, _ = issue_of(auth, db, client, issue_id)
    row = edit_comment(
        db,
        auth.org_id,
        project.id,
        int(issue_id),
        comment_id,
        comment.body,
        author=f"api:{auth.api_key_id}",
        notifier=notifier_for(settings, client),
    )
    return _out(row)


@router.delete("/issues/{issue_id}/comments/{comment_id}", status_code=204, responses=ERRORS)
def remove_comment(
    auth: ApiAuth, db: DbSession, client: Warehouse, issue_id: str, comment_id: int
) -> Response:
    """Delete a comment this key made."""
    project, _ = issue_of(auth, db, client, issue_id)
    delete_comment(db, auth.org_id, project.id, int(issue_id), comment_id, author=f"api:{auth.api_key_id}")
    return Response(status_code=204)
