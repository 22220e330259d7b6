"""Annotations on the dashboards page (`/orgs/{org}/dashboards`, its "Annotations" section): add one by
hand (what CI posts with ``stacklens annotate``) and delete one; each form carries the CSRF token."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from dashboards.context import Db, OrgViewer
from dashboards.security import check_csrf
from stacklens import annotations as notes

router = APIRouter(include_in_schema=False)
PATH = "/orgs/{org_slug}/annotations"
BACK = "/orgs/{org_slug}/dashboards#annotations"


@router.post(PATH)
async def add(request: Request, viewer: OrgViewer, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    body = {key: str(form.get(key) or "") for key in ("time", "text", "tags", "project", "release")}
    notes.create_annotation(db, viewer.org.id, body)
    return RedirectResponse(BACK.format(org_slug=viewer.org.slug), status_code=303)


@router.post(PATH + "/{annotation_id}/delete")
async def delete(request: Request, annotation_id: int, viewer: OrgViewer, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    notes.delete_annotation(db, viewer.org.id, annotation_id)
    return RedirectResponse(BACK.format(org_slug=viewer.org.slug), status_code=303)
