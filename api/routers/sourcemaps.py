"""Source-map uploads as sentry-cli makes them, and the project's bundles.

sentry-cli (``SENTRY_URL`` = this service, ``SENTRY_AUTH_TOKEN`` = a StackLens API key) calls, under
``/api/0/organizations/{org}/``: ``GET chunk-upload/`` (the upload settings), ``POST chunk-upload/``
(multipart chunks named by their SHA-1, fields ``file`` or ``file_gzip``) and ``POST
artifactbundle/assemble/`` (``{"checksum", "chunks", "projects", "version", "dist"}``, answered with
``state`` and ``missingChunks``). ``{org}`` is the organization's slug, or ``-`` for the key's
organization. Another organization answers 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from api.deps import ApiAuth, DbSession, OrgProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import Organization
from stacklens.control.projects import project_by_slug
from stacklens.errors import InvalidInput, TooLarge
from stacklens.sourcemaps import store
from stacklens.sourcemaps.bundle import MAX_REQUEST_SIZE
from stacklens.sourcemaps.uploads import accept_chunks, assemble, chunk_options

router = APIRouter(prefix="/api", tags=["sourcemaps"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A chunk does not match its SHA-1, or a field is wrong."},
    404: {"model": ErrorBody, "description": "No such organization or project for this key."},
    413: {"model": ErrorBody, "description": "The request or a chunk is over its limit."},
}
OrgSlug = Annotated[str, Path(max_length=64)]


def _org(db: DbSession, identity: ApiAuth, org: str) -> Organization:
    found = db.get(Organization, identity.org_id)
    if found is None or (org != "-" and org.lower() != found.slug):
        raise ApiError(404, "Not Found", f"no organization {org!r} for this API key")
    return found


@router.get("/0/organizations/{org}/chunk-upload/", responses=ERRORS)
def upload_options(org: OrgSlug, request: Request, db: DbSession, identity: ApiAuth) -> dict[str, object]:
    """The chunk-upload settings sentry-cli asks for first (chunk size, limits, compression, capabilities)."""
    found = _org(db, identity, org)
    return chunk_options(str(request.url_for("upload_chunks", org=found.slug)))


@router.post(
    "/0/organizations/{org}/chunk-upload/",
    responses={**ERRORS, 200: {"description": "The chunks are stored; no body.", "content": {}}},
    response_class=Response,
    name="upload_chunks",
)
async def upload_chunks(
    org: OrgSlug, request: Request, db: DbSession, identity: ApiAuth, warehouse: Warehouse
) -> Response:
    """Store chunks: multipart parts named by the SHA-1 of their (uncompressed) bytes."""
    _org(db, identity, org)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REQUEST_SIZE:
        raise TooLarge(f"the request is {int(declared):,} bytes; at most {MAX_REQUEST_SIZE:,} per request")
    body = await request.body()
    if len(body) > MAX_REQUEST_SIZE:
        raise TooLarge(f"the request is {len(body):,} bytes; at most {MAX_REQUEST_SIZE:,} per request")
    try:
        form = await request.form(max_files=1000, max_part_size=MAX_REQUEST_SIZE)
    except Exception as exc:  # python-multipart's own errors: a body that is not multipart
        raise InvalidInput(f"the body is not multipart/form-data with chunk files ({exc})") from exc
    parts = []
    for field_name, value in form.multi_items():
        if not isinstance(value, UploadFile):
            raise InvalidInput(f"form field {field_name!r} is not a file; chunks are sent as files")
        parts.append((field_name, value.filename or "", await value.read()))
    await form.close()
    accept_chunks(warehouse, identity.org_id, parts)
    return Response(status_code=200)


class AssembleIn(BaseModel):
    checksum: str = Field(description="SHA-1 of the whole bundle.")
    chunks: list[str] = Field(description="SHA-1 of each chunk, in order.")
    projects: list[str] = Field(default_factory=list, description="Project slugs the bundle belongs to.")
    version: str | None = Field(default=None, description="The release.")
    dist: str | None = None


class AssembleOut(BaseModel):
    state: str = Field(description="`ok`, `not_found` (send `missingChunks` first) or `error`.")
    missingChunks: list[str]  # noqa: N815 - sentry-cli's field name
    detail: str | None


@router.post("/0/organizations/{org}/artifactbundle/assemble/", responses=ERRORS)
def assemble_bundle(
    org: OrgSlug, body: AssembleIn, db: DbSession, identity: ApiAuth, warehouse: Warehouse
) -> AssembleOut:
    """Put an uploaded artifact bundle together, check it whole and store it for its projects."""
    _org(db, identity, org)
    if not body.projects:
        raise InvalidInput("`projects` is empty; name the project the bundle belongs to")
    project_ids = [project_by_slug(db, slug, identity.org_id).id for slug in body.projects]
    result = assemble(
        warehouse,
        identity.org_id,
        project_ids,
        body.checksum,
        body.chunks,
        body.version or "",
        body.dist or "",
    )
    return AssembleOut(state=result.state, missingChunks=result.missing, detail=result.detail)


class BundleFileOut(BaseModel):
    url: str
    type: str
    size: int
    debug_id: str


class BundleOut(BaseModel):
    bundle_id: str
    release: str
    dist: str
    uploaded_at: str
    size: int
    debug_ids: list[str]
    files: list[BundleFileOut]


@router.get("/projects/{slug}/sourcemaps", responses=ERRORS)
def list_bundles(project: OrgProject, identity: ApiAuth, warehouse: Warehouse) -> dict[str, list[BundleOut]]:
    """The project's uploaded bundles, newest first, with their files, sizes and debug ids."""
    return {
        "bundles": [
            BundleOut(
                bundle_id=b.bundle_id,
                release=b.release,
                dist=b.dist,
                uploaded_at=b.uploaded_at.isoformat(),
                size=b.size,
                debug_ids=b.debug_ids,
                files=[
                    BundleFileOut(url=f.url, type=f.file_type, size=f.size, debug_id=f.debug_id)
                    for f in b.files
                ],
            )
            for b in store.bundles(warehouse, identity.org_id, project.id)
        ]
    }


@router.delete("/projects/{slug}/sourcemaps/{bundle_id}", status_code=204, responses=ERRORS)
def delete_bundle(
    slug: str, project: OrgProject, bundle_id: str, identity: ApiAuth, warehouse: Warehouse
) -> Response:
    """Delete one bundle: its frames show minified again unless another bundle maps them."""
    if not store.delete_bundle(warehouse, identity.org_id, project.id, bundle_id):
        raise ApiError(404, "Not Found", f"no bundle {bundle_id!r} in project {slug!r}")
    return Response(status_code=204)
