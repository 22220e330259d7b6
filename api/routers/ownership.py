"""A project's ownership rules (docs/issues.md): `GET/PUT /api/projects/{slug}/ownership` with `{"rules":
"…"}` in Sentry's ownership syntax. New issues are assigned by them within about a minute
(stacklens.issues.auto_assign)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession, ProjectOfSlug
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import Project
from stacklens.issues.auto_assign import get_rules, set_rules
from stacklens.issues.ownership import MAX_TEXT

router = APIRouter(prefix="/api", tags=["teams"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A line is not a rule, or names an owner who is not here."},
    404: {"model": ErrorBody, "description": "No such project in this organization."},
}
EXAMPLE = (
    "path:src/checkout/* #payments\nurl:*/api/search* search-lead@example.com\ntags.service:worker #platform"
)


class Ownership(BaseModel):
    rules: str = Field(
        max_length=MAX_TEXT,
        description="One rule per line: `<path|module|url|tags.KEY|release>:<glob> <#team or e-mail> …`; "
        "the last matching rule assigns a new issue to its first owner.",
        examples=[EXAMPLE],
    )


OwnedProject = Annotated[Project, Depends(ProjectOfSlug("no such project in this organization"))]


@router.get("/projects/{slug}/ownership", response_model=Ownership, responses=ERRORS)
def get_ownership(auth: ApiAuth, db: DbSession, project: OwnedProject) -> Ownership:
    return Ownership(rules=get_rules(db, auth.org_id, project.id))


@router.put("/projects/{slug}/ownership", response_model=Ownership, responses=ERRORS)
def put_ownership(auth: ApiAuth, db: DbSession, project: OwnedProject, body: Ownership) -> Ownership:
    """Replace the project's rules (checked line by line; nothing is stored when a line is refused)."""
    set_rules(db, auth.org_id, project, body.rules, actor=f"api:{auth.api_key_id}")
    return Ownership(rules=get_rules(db, auth.org_id, project.id))
