"""`GET /api/projects`: the key's organization's projects with their app keys and DSNs, cursor-paginated."""

from __future__ import annotations

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.deps import ApiAuth, AppSettings, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.keys.dsn import project_dsns
from stacklens.control.keys.lifecycle import list_app_keys
from stacklens.control.models import Project, iso_utc
from stacklens.pagination import InvalidCursor, decode_cursor, encode_cursor
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["projects"])

MAX_PAGE = 200


class AppKeyOut(BaseModel):
    id: int
    service: str | None = Field(description="The service of a per-service key; null for the primary key.")
    primary: bool
    masked: str = Field(description="Prefix and last four characters of the key.")
    dsn: str | None = Field(
        description="The DSN a Sentry SDK is given (`http(s)://<app key>@<host>/<project id>`); null for an "
        "older per-service key whose service name holds `-` (it keeps working for the shipper)."
    )
    created_at: str


class ProjectOut(BaseModel):
    id: int
    name: str
    slug: str
    platform: str
    created_at: str
    app_keys: list[AppKeyOut]


class ProjectPage(BaseModel):
    projects: list[ProjectOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


def _after_id(cursor: str) -> int:
    """The last project id of the previous page (the cursor's one part)."""
    try:
        (last_id,) = decode_cursor(cursor, int)
    except InvalidCursor as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    return int(last_id)


def project_out(session: DbSession, project: Project, settings: Settings) -> ProjectOut:
    dsns = project_dsns(session, project.id, settings)
    return ProjectOut(
        id=project.id,
        name=project.name,
        slug=project.slug,
        platform=project.platform,
        created_at=iso_utc(project.created_at),
        app_keys=[
            AppKeyOut(
                id=k.id,
                service=k.service,
                primary=k.service is None,
                masked=k.masked,
                dsn=dsns.get(k.id),
                created_at=iso_utc(k.created_at),
            )
            for k in list_app_keys(session, project.id)
        ],
    )


@router.get("/projects", response_model=ProjectPage, responses={**AUTH_ERRORS, 400: {"model": ErrorBody}})
def projects(
    identity: ApiAuth,
    session: DbSession,
    settings: AppSettings,
    cursor: str | None = Query(default=None, description="`next_cursor` of the previous page."),
    limit: int = Query(default=50, ge=1, le=MAX_PAGE),
) -> ProjectPage:
    """The organization's projects, oldest first."""
    query = select(Project).where(Project.org_id == identity.org_id)
    if cursor:
        query = query.where(Project.id > _after_id(cursor))
    rows = list(session.scalars(query.order_by(Project.id).limit(limit + 1)))
    page = rows[:limit]
    next_cursor = encode_cursor(page[-1].id) if len(rows) > limit else None
    return ProjectPage(projects=[project_out(session, p, settings) for p in page], next_cursor=next_cursor)
