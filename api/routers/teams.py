"""Teams of the organization's members (docs/issues.md): list, create, set members. Bearer API key."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.teams import TeamRow, create_team, list_teams, set_members

router = APIRouter(prefix="/api", tags=["teams"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field's value cannot be used (the message names it)."},
    404: {"model": ErrorBody, "description": "No such team, or an e-mail that is not a member."},
    409: {"model": ErrorBody, "description": "A team with that slug exists."},
}


class TeamIn(BaseModel):
    slug: str = Field(
        max_length=64, description="Lower-case letters, digits and dashes; `#slug` names the team."
    )
    name: str = Field("", max_length=200)


class TeamOut(BaseModel):
    slug: str
    name: str
    members: list[str] = Field(description="Members' e-mails.")


class TeamList(BaseModel):
    teams: list[TeamOut]


class MembersIn(BaseModel):
    members: list[str] = Field(
        max_length=1000, description="E-mails of organization members: the whole team."
    )


def _out(row: TeamRow) -> TeamOut:
    return TeamOut(slug=row.slug, name=row.name, members=list(row.members))


@router.get("/teams", response_model=TeamList, responses=ERRORS)
def get_teams(auth: ApiAuth, db: DbSession) -> TeamList:
    return TeamList(teams=[_out(t) for t in list_teams(db, auth.org_id)])


@router.post("/teams", response_model=TeamOut, status_code=201, responses=ERRORS)
def post_team(auth: ApiAuth, db: DbSession, team: TeamIn) -> TeamOut:
    created = create_team(db, auth.org_id, team.slug, team.name)
    return TeamOut(slug=created.slug, name=created.name, members=[])


@router.put("/teams/{slug}/members", response_model=TeamOut, responses=ERRORS)
def put_members(auth: ApiAuth, db: DbSession, slug: str, members: MembersIn) -> TeamOut:
    """Make the team's members exactly these e-mails."""
    return _out(set_members(db, auth.org_id, slug, members.members))
