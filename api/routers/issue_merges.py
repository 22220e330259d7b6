"""Merging issues and splitting them (docs/issues.md): ``POST /api/issues/merge`` ``{"ids": [...]}`` answers
the
surviving issue, ``POST /api/issues/{id}/split`` ``{"fingerprints": [...]}`` the new issues. Bearer API
key; an issue of another organization answers 404 like one that does not exist, and nothing is merged."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth, AppSettings, DbSession, Warehouse
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.issues_api import IssueOut, issue_answer, issue_of
from stacklens.ingest.front_door import landing_held
from stacklens.issues.assignees import assignees_of
from stacklens.issues.merges import merge, split

router = APIRouter(prefix="/api", tags=["issues"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field cannot be used (the message names it)."},
    404: {"model": ErrorBody, "description": "One of the issues is not in this organization."},
    409: {
        "model": ErrorBody,
        "description": "Another merge or split of the project's issues is running; nothing was changed.",
    },
}


class MergeIn(BaseModel):
    ids: list[str] = Field(
        description="The issues to merge (two or more, of one project), as decimal strings."
    )
    into: str | None = Field(
        None,
        description="Which of them survives; by default the one with the most events. The others' ids redirect.",
    )


class MergeOut(IssueOut):
    merged: list[str] = Field(description="The issues merged into this one by this request.")


class SplitIn(BaseModel):
    fingerprints: list[str] = Field(
        default_factory=list, description="Fingerprints merged into the issue to give their own issue back."
    )
    exception_types: list[str] = Field(
        default_factory=list,
        description="Or: every merged fingerprint whose events raise one of these types.",
    )


class SplitOut(BaseModel):
    issue: IssueOut = Field(description="The issue split, with what it keeps.")
    issues: list[IssueOut] = Field(description="The new issues, one per fingerprint split out.")


@router.post("/issues/merge", response_model=MergeOut, responses=ERRORS)
def merge_issues(
    auth: ApiAuth, db: DbSession, client: Warehouse, settings: AppSettings, body: MergeIn
) -> MergeOut:
    """Merge issues into one: their events, counters, users, first/last seen, tags and alert measures become
    the survivor's, new events of their fingerprints land on it, and their ids redirect (301) to it."""
    result = merge(
        db,
        client,
        auth.org_id,
        body.ids,
        into=body.into,
        actor=f"api:{auth.api_key_id}",
        hold_landing=partial(landing_held, settings),
    )
    project, summary = issue_of(auth, db, client, str(result.target))
    assignee = assignees_of(db, auth.org_id, project.id, [result.target]).get(result.target)
    out = issue_answer(project, summary, assignee=assignee)
    return MergeOut(**out.model_dump(), merged=[str(i) for i in result.merged])


@router.post("/issues/{issue_id}/split", response_model=SplitOut, responses=ERRORS)
def split_issue(
    auth: ApiAuth, db: DbSession, client: Warehouse, settings: AppSettings, issue_id: str, body: SplitIn
) -> SplitOut:
    """Give merged fingerprints (or the merged fingerprints of some exception types) their own issue back."""
    project, _ = issue_of(auth, db, client, issue_id)
    result = split(
        db,
        client,
        auth.org_id,
        int(issue_id),
        fingerprints=body.fingerprints,
        exception_types=body.exception_types,
        actor=f"api:{auth.api_key_id}",
        hold_landing=partial(landing_held, settings),
    )
    _, kept = issue_of(auth, db, client, issue_id)
    new = [issue_answer(project, issue_of(auth, db, client, str(i))[1]) for i in result.new_issues]
    return SplitOut(issue=issue_answer(project, kept), issues=new)
