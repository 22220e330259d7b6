"""Release health as JSON for scripts and analysts (docs/reference.md): every release of a project with its
sessions, users, crash-free sessions and users, errored sessions, adoption, errors per 1,000 page loads,
new issues, its performance figures and its verdict against the release before it; or one release. The
fields are the release pages' (docs/releases.md). Bearer API key; a project of another organization answers
404 like one that does not exist. ``?format=csv`` gives the same rows as CSV (text cells neutralised
against formulas)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from api.deps import ApiAuth, ViewedProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.release_answers import ReleaseDetailOut, ReleasesOut
from stacklens.csv_cells import csv_text
from stacklens.json_values import plain
from stacklens.releases.detail import exists
from stacklens.releases.health import ReleaseHealth, Window, release_health
from stacklens.releases.release_list import health_filters, sort_releases
from stacklens.view_filters import BadFilter, ViewFilters

router = APIRouter(prefix="/api/projects", tags=["releases"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A filter value cannot be used; `detail` names the field."},
    404: {"model": ErrorBody, "description": "No such project in this organization, or no such release."},
}
FILTER_DOC = (
    " Filters: `range` (24h, 7d, 14d, 30d, 90d; default 30d) or `since`/`until` (ISO 8601), `environment`"
    " (the performance API's; `browser` is refused: sessions carry none). `format=csv` answers the rows as CSV."
)


def _filters(request: Request) -> ViewFilters:
    query = request.query_params
    try:
        return health_filters(
            range=query.get("range", ""),
            since=query.get("since", ""),
            until=query.get("until", ""),
            environment=query.get("environment", ""),
            release=query.get("release", ""),
            browser=query.get("browser", ""),
        )
    except BadFilter as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc


def _format(request: Request) -> str:
    fmt = request.query_params.get("format", "json")
    if fmt not in ("json", "csv"):
        raise ApiError(400, "Bad Request", "format: must be json or csv")
    return fmt


def _csv(rows: list[ReleaseHealth], filename: str) -> Response:
    flat = [plain(r.csv_row()) for r in rows]
    columns = list(flat[0]) if flat else list(ReleaseHealth.__dataclass_fields__)
    return Response(
        csv_text(columns, flat),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get(
    "/{slug}/releases",
    response_model=ReleasesOut,
    responses=ERRORS,
    summary="Release health of every release",
)
def list_releases(
    slug: str,
    request: Request,
    auth: ApiAuth,
    project: ViewedProject,
    warehouse: Warehouse,
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d (default 30d)")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end (default now)")] = "",
    environment: str = "",
    release: Annotated[
        str, Query(description="only this release (its verdict still against the one before)")
    ] = "",
    sort: Annotated[
        str, Query(description="first_seen, version, adoption, crash_free_sessions, …")
    ] = "first_seen",
    order: Annotated[str, Query(description="asc or desc (default desc: newest first)")] = "desc",
    format: Annotated[str, Query(description="json or csv")] = "json",
) -> Response:
    """Every release with sessions, page loads or error events in the window: `version`, `first_seen`,
    `sessions`, `users`, `crash_free_sessions`, `crash_free_users` (percent), `errored_sessions_pct`,
    `adoption` (percent of the environment's sessions in the 24 h before the window's end),
    `errors_per_1k_page_loads`, `new_issues`, `load_p75`, `js_bytes_per_view`, `api_p95` with their
    changes, and `verdict` (`{"regression", "reasons", "previous_release", "comparisons"}`)."""
    project_id = project.id
    filters = _filters(request)
    fmt = _format(request)
    rows = release_health(warehouse, auth.org_id, project_id, Window.of(filters), filters.environment)
    try:
        rows = sort_releases(rows, sort, order)
    except BadFilter as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    if filters.release:
        rows = [r for r in rows if r.version == filters.release]
    if fmt == "csv":
        return _csv(rows, f"{slug}-releases.csv")
    return JSONResponse({"rows": [plain(r.as_dict()) for r in rows], "filters": filters.describe()})


@router.get(
    "/{slug}/releases/{version:path}",
    response_model=ReleaseDetailOut,
    responses=ERRORS,
    summary="Release health of one release",
)
def get_release(
    slug: str,
    version: str,
    request: Request,
    auth: ApiAuth,
    project: ViewedProject,
    warehouse: Warehouse,
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d (default 30d)")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end (default now)")] = "",
    environment: str = "",
    format: Annotated[str, Query(description="json or csv")] = "json",
) -> Response:
    """One release over the window, with the fields of the list's rows (its verdict against the release before
    it); 404 naming the release when the project never saw it within the retention, or when it has no
    sessions, page loads or errors in this window (the message says which)."""
    project_id = project.id
    filters = _filters(request)
    fmt = _format(request)
    rows = release_health(warehouse, auth.org_id, project_id, Window.of(filters), filters.environment)
    found = next((r for r in rows if r.version == version), None)
    if found is None:
        if not exists(warehouse, auth.org_id, project_id, version):
            detail = (
                f"no release {version!r} in project {slug!r} (none of its sessions, page loads or errors)"
            )
            raise ApiError(404, "Not Found", detail)
        raise ApiError(
            404,
            "Not Found",
            f"release {version!r} has no sessions, page loads or errors in this window; widen range or since/until",
        )
    if fmt == "csv":
        return _csv([found], f"{slug}-release.csv")
    return JSONResponse({**plain(found.as_dict()), "filters": filters.describe()})
