"""The INP view as JSON (docs/performance.md, "INP causes"): ``GET /api/projects/{slug}/performance/inp`` —
the INP parts p75 per page and per interaction target, the scripts ranked by their share of the attributed
script time, first- against third-party time per page, and the browsers that send no INP or no attribution,
with the performance views' filters and ``page``; ``?format=csv`` answers the parts rows. ``GET/PUT
/api/projects/{slug}/performance/first-party-hosts``: the project's own script hosts. Bearer API key;
another organization's project answers 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field
from starlette.datastructures import QueryParams

from api.deps import ApiAuth, DbSession, ViewedProject, Warehouse
from api.errors import ApiError
from api.routers.performance import ERRORS
from stacklens.performance.inp.hosts import first_party_hosts, normalise_hosts, set_first_party_hosts
from stacklens.performance.inp.reads import inp_view
from stacklens.performance.inp.table import parts_csv
from stacklens.view_filters import ViewFilters, default_range

router = APIRouter(prefix="/api/projects", tags=["performance"])


class PartOut(BaseModel):
    page: str
    target: str = Field(description="The element's selector; '' for the page's row (every target).")
    type: str = Field(description="click, keydown, pointerdown …; '' for the page's row.")
    interactions: int
    attributed: int = Field(description="Interactions with input delay, processing and presentation delay.")
    with_scripts: int = Field(description="Interactions with long-animation-frame (script) data.")
    inp_p75: float | None
    input_delay_p75: float | None
    processing_p75: float | None
    presentation_p75: float | None
    third_party_p75: float | None
    main_part: str = Field(description="input_delay, processing or presentation: the largest p75.")


class ScriptOut(BaseModel):
    url: str
    host: str
    function: str
    invoker: str
    third_party: bool
    runs: int
    interactions: int
    ms: float
    avg_ms: float
    input_delay_ms: float
    processing_ms: float
    presentation_ms: float
    share_pct: float = Field(description="Share of the attributed script time (all scripts' time).")
    main_part: str


class PartyOut(BaseModel):
    page: str
    interactions: int
    with_scripts: int
    first_party_ms: float
    third_party_ms: float
    third_party_interactions: int
    first_party_pct: float | None
    third_party_pct: float | None


class BrowserOut(BaseModel):
    browser: str
    page_loads: int
    inp_page_loads: int
    interactions: int
    attributed: int
    with_scripts: int
    gap: str = Field(description="What the browser does not send, e.g. 'no script attribution from Firefox'.")


class InpOut(BaseModel):
    rows: list[PartOut] = Field(description="Per page (target '') and per page, target and type.")
    scripts: list[ScriptOut]
    parties: list[PartyOut]
    browsers: list[BrowserOut]
    attributed_ms: float = Field(description="All scripts' time in the window: what the shares are of.")
    filters: dict[str, str]


class HostsIn(BaseModel):
    hosts: list[str] = Field(
        description="Host names (optionally with a port) whose scripts are the project's own, e.g. "
        "cdn.example.com; the page's own host always is."
    )


class HostsOut(BaseModel):
    project: str
    hosts: list[str]


def _inp_query(
    request: Request,
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d (default 7d)")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end (default now)")] = "",
    environment: str = "",
    release: str = "",
    browser: str = "",
    page: Annotated[str, Query(description="A page (route) to show alone; '' for every page")] = "",
    format: Annotated[str, Query(description="json or csv (the parts rows)")] = "json",
) -> QueryParams:
    """The performance views' filters, ``page`` and ``format``, declared for the OpenAPI page; handed on
    unparsed, so an unknown project answers 404 whatever its filters (a bad filter answers 400 naming it)."""
    return request.query_params


@router.get(
    "/{slug}/performance/inp",
    response_model=InpOut,
    responses={**ERRORS, 200: {"content": {"text/csv": {}}, "description": "The INP view (JSON or CSV)."}},
)
def performance_inp(
    slug: str,
    auth: ApiAuth,
    project: ViewedProject,
    warehouse: Warehouse,
    query: Annotated[QueryParams, Depends(_inp_query)],
) -> InpOut | Response:
    """INP causes: which interaction, which part of it (input delay, processing, presentation delay) and which
    script — first party or third — with sample counts; browsers without the data are named."""
    filters = ViewFilters.from_query(query, default=default_range("overview"))
    fmt, page = query.get("format", "json"), query.get("page", "")
    if fmt not in ("json", "csv"):
        raise ApiError(400, "Bad Request", "format: must be json or csv")
    if len(page) > 300:
        raise ApiError(400, "Bad Request", "page: at most 300 characters")
    view = inp_view(warehouse, auth.org_id, project.id, filters, page)
    if fmt == "csv":
        return StreamingResponse(
            iter([parts_csv(view)]),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{slug}-performance-inp.csv"'},
        )
    data = view.as_dict()
    return InpOut(
        rows=[PartOut(**r) for r in data["parts"]],
        scripts=[ScriptOut(**r) for r in data["scripts"]],
        parties=[PartyOut(**r) for r in data["parties"]],
        browsers=[BrowserOut(**r) for r in data["browsers"]],
        attributed_ms=view.attributed_ms,
        filters={k: str(v) for k, v in filters.describe().items()},
    )


@router.get("/{slug}/performance/first-party-hosts", response_model=HostsOut, responses=ERRORS)
def get_first_party_hosts(slug: str, auth: ApiAuth, project: ViewedProject, session: DbSession) -> HostsOut:
    """The project's own script hosts (beside the page's host): their scripts count as first party."""
    return HostsOut(project=project.slug, hosts=first_party_hosts(session, auth.org_id, project.id) or [])


@router.put("/{slug}/performance/first-party-hosts", response_model=HostsOut, responses=ERRORS)
def put_first_party_hosts(
    slug: str, body: HostsIn, auth: ApiAuth, project: ViewedProject, session: DbSession
) -> HostsOut:
    """Replace the project's own script hosts; the interactions written from then on are classified with
    them (docs/performance.md, "INP causes")."""
    hosts = normalise_hosts(body.hosts)
    set_first_party_hosts(session, auth.org_id, project.id, hosts)
    return HostsOut(project=project.slug, hosts=hosts)
