"""The INP page of a project (docs/performance.md, "INP causes"): which interaction, which part of it and
which script — first party or third — over the performance filters and an optional page; the numbers are
the INP API's (stacklens.performance.inp.reads)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dashboards import inp_figures
from dashboards.context import CurrentProject
from dashboards.routers.performance import BASE, performance_page
from stacklens.performance.inp.reads import PART_LABELS, inp_view

router = APIRouter(include_in_schema=False)


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
