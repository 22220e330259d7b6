"""The INP page of a project (docs/performance.md, "INP causes"): which interaction, which part of it and
which script — first party or third — over the performance filters and an optional page; the numbers are
the INP API's (stacklens.performance.inp.reads). And the project settings' form of the project's own script
hosts (``PUT /api/projects/{slug}/performance/first-party-hosts`` does the same): a bad host changes nothing,
the page comes back with the box as typed and the host named."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards import inp_figures
from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.routers.keys import project_context
from dashboards.routers.performance import BASE, performance_page
from dashboards.security import check_csrf
from stacklens.errors import InvalidInput
from stacklens.performance.inp.hosts import normalise_hosts, set_first_party_hosts
from stacklens.performance.inp.reads import PART_LABELS, inp_view

router = APIRouter(include_in_schema=False)
SETTINGS = "/orgs/{org_slug}/projects/{project_slug}/settings"
# Hosts are typed one per line; commas and spaces separate them too.
_SEPARATORS = re.compile(r"[\s,]+")


@router.get(BASE + "/inp", response_class=HTMLResponse)
def inp_page(request: Request, view: CurrentProject, page: str = "") -> Response:
    def fill(client: Any, filters: Any) -> dict[str, Any]:
        if len(page) > 300:
            raise ValueError("page: at most 300 characters")
        data = inp_view(client, view.org_id, view.project_id, filters, page)
        figures = {}
        if any(r.attributed for r in data.parts):
            figures["parts"] = inp_figures.parts_figure(data.parts)
        if data.scripts:
            figures["scripts"] = inp_figures.scripts_figure(data.scripts)
        return {"data": data, "figures": figures, "page": page, "part_labels": PART_LABELS}

    return performance_page(request, view, "/inp", "perf_inp.html", fill)


@router.post(SETTINGS + "/first-party-hosts")
def first_party_hosts_setting(
    request: Request,
    view: CurrentProject,
    db: Db,
    hosts: Annotated[str, Form(max_length=20_000)] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Save the project's own script hosts (owners, like the settings page); the INP view counts their
    scripts as first party in the hours written from then on."""
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    try:
        saved = normalise_hosts([h for h in _SEPARATORS.split(hosts) if h])
    except InvalidInput as exc:
        error = f"The first-party hosts were not saved: {exc}"
        form = {"value": hosts, "error": str(exc)}
        context = project_context(request, view, db, hosts_form=form, error=error)
        return render(request, "project_settings.html", context, 400)
    set_first_party_hosts(db, view.org_id, view.project_id, saved)
    db.commit()
    page = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/settings"
    return RedirectResponse(page + "?saved=hosts#first-party-hosts", status_code=303)
