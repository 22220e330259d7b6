"""The issue page's tracker actions: **Create linked issue** (connection, target, the prefilled title and the
user's notes), **Link existing** (a ticket's URL or key) and unlink. A tracker that fails re-renders the
issue page with its words above the forms (and the activity log has an entry); nothing is half-created."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.routers.issue_detail import ISSUE, issue_context, load_issue
from dashboards.security import check_csrf
from stacklens.errors import NotFound, StackLensError, Unavailable
from stacklens.integrations import links
from stacklens.integrations.prefill import Draft, draft_for
from stacklens.public_url import absolute_link

router = APIRouter(include_in_schema=False)


@router.post(ISSUE + "/links")
async def link_issue(request: Request, view: CurrentProject, db: Db, issue_id: int) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    values = {
        k: str(form.get(k) or "").strip()
        for k in ("action", "integration_id", "target", "title", "notes", "reference")
    }
    summary, _events = load_issue(view, issue_id)
    settings = request.app.state.settings
    org_slug, project_slug = view.viewer.org.slug, view.project.slug
    path = f"/orgs/{org_slug}/projects/{project_slug}/issues/{issue_id}"
    actor = view.viewer.user.email
    db.commit()  # the link flow commits step by step in its own transactions
    try:
        if values["action"] == "existing":
            result = await run_in_threadpool(
                links.link_existing,
                settings,
                view.org_id,
                view.project_id,
                issue_id,
                values["integration_id"],
                values["reference"],
                values["target"],
                actor,
                view.viewer.user.id,
            )
            done = "linked_existing" if result.created else "link_existing"
        else:
            draft = draft_for(
                view.warehouse, view.org_id, view.project_id, issue_id, summary, absolute_link(settings, path)
            )
            title = values["title"][:240] or draft.title
            draft = Draft(title, values["notes"][:5000], draft.summary, draft.stack_top, draft.link)
            result = await run_in_threadpool(
                links.create_link,
                settings,
                view.org_id,
                view.project_id,
                issue_id,
                values["integration_id"],
                values["target"],
                draft,
                actor,
                view.viewer.user.id,
            )
            done = "linked" if result.created else "link_existing"
    except StackLensError as exc:
        db.expire_all()
        context = issue_context(request, view, db, issue_id)
        context["link_error"] = str(exc)
        context["link_values"] = values
        status = 503 if isinstance(exc, Unavailable) else 404 if isinstance(exc, NotFound) else 400
        return render(request, "issue_detail.html", context, status)
    return RedirectResponse(f"{path}?done={done}#linked-issues", status_code=303)


@router.post(ISSUE + "/links/{link_id}/unlink")
async def unlink(request: Request, view: CurrentProject, db: Db, issue_id: int, link_id: int) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    try:
        links.unlink(db, view.org_id, link_id, view.viewer.user.id)
    except StackLensError as exc:
        raise HTTPException(status_code=404, detail="Not Found") from exc
    path = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues/{issue_id}"
    return RedirectResponse(f"{path}?done=unlinked#linked-issues", status_code=303)
