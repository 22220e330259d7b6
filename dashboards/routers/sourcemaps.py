"""The project's source maps page: how to upload, and every uploaded bundle (release, dist, files, sizes,
debug ids, upload time) with delete for owners."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.public_url import public_base_url
from stacklens.sourcemaps import store

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/projects/{project_slug}/sourcemaps"
NOTICES = {"deleted": "Bundle deleted: frames it mapped show minified again unless another bundle maps them."}


@router.get(PAGE, response_class=HTMLResponse)
def sourcemaps_page(request: Request, view: CurrentProject, done: str = "") -> Response:
    bundles = store.bundles(view.warehouse, view.org_id, view.project_id)
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "bundles": bundles,
        "base_url": public_base_url(view.settings),
        "page_path": f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/sourcemaps",
        # A fixed notice chosen by code, so a crafted link cannot put its own words on the page.
        "message": NOTICES.get(done, ""),
    }
    return render(request, "sourcemaps.html", context)


@router.post(PAGE + "/{bundle_id}/delete")
def delete_bundle(
    request: Request, view: CurrentProject, bundle_id: str, csrf_token: Annotated[str, Form()] = ""
) -> Response:
    view.viewer.require_admin()
    check_csrf(request, csrf_token)
    if not store.delete_bundle(view.warehouse, view.org_id, view.project_id, bundle_id):
        raise HTTPException(status_code=404, detail="Not Found")
    path = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/sourcemaps?done=deleted"
    return RedirectResponse(path, status_code=303)
