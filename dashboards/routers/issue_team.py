"""The issue page's team work: assign, comment (add, edit and delete one's own), and what the page shows of it
(the assignee with why, the choices, and the history with status changes, assignments and comments in time
order)."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup

from dashboards.context import CurrentProject, Db, app_settings
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.teams import resolve_assignee
from stacklens.errors import Conflict, Forbidden, InvalidInput, NotFound
from stacklens.ingest.front_door import landing_held
from stacklens.issues.assignees import NOBODY, assign, assignee_choices, assignees_of
from stacklens.issues.comments import MAX_BODY, add_comment, delete_comment, edit_comment
from stacklens.issues.merge_reads import merged_groups
from stacklens.issues.merges import split
from stacklens.issues.notifications import Notifier, notifier_for, set_watching, watching
from stacklens.issues.reads import issue_summary
from stacklens.issues.timeline import timeline

ISSUE = "/orgs/{org_slug}/projects/{project_slug}/issues/{issue_id}"


def load_issue(view: CurrentProject, issue_id: int) -> None:
    """404 unless the issue is one of this organization's project (the issue page's own check)."""
    if issue_summary(view.warehouse, view.org_id, view.project_id, issue_id) is None:
        raise HTTPException(status_code=404, detail="Not Found")


def _checked_issue(
    request: Request, view: CurrentProject, issue_id: int, csrf_token: Annotated[str, Form()] = ""
) -> None:
    """Every form of the issue's team work (each route of this router): the CSRF token checked, then the issue
    found in this project."""
    check_csrf(request, csrf_token)
    load_issue(view, issue_id)


router = APIRouter(include_in_schema=False, dependencies=[Depends(_checked_issue)])


def team_context(view: CurrentProject, db: Db, issue_id: int) -> dict[str, Any]:
    """What the issue page shows of the team's work on the issue."""
    items = timeline(db, view.warehouse, view.org_id, view.project_id, issue_id)
    # The comments' HTML comes from stacklens.issues.comment_markdown, which never lets the author's HTML
    # through (raw HTML off, text escaped, unsafe URLs refused): it is markup of ours, not user data.
    html = {item.comment.id: Markup(item.comment.html) for item in items if item.comment is not None}
    return {
        "assignee": assignees_of(db, view.org_id, view.project_id, [issue_id]).get(issue_id),
        "assignee_choices": assignee_choices(db, view.org_id),
        "timeline": items,
        "comment_html": html,
        "max_comment": MAX_BODY,
        "watching": watching(db, view.org_id, view.project_id, issue_id, view.viewer.user.id),
        "merged_groups": merged_groups(db, view.warehouse, view.org_id, view.project_id, issue_id),
    }


def notifier_of(request: Request, view: CurrentProject) -> Notifier:
    """Who is told, with links on the service's public address."""
    return notifier_for(request.app.state.settings, view.warehouse)


def _back(view: CurrentProject, issue_id: int, anchor: str = "") -> RedirectResponse:
    path = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues/{issue_id}"
    return RedirectResponse(path + anchor, status_code=303)


# The domain's refusals the forms answer on the error page.
_REFUSALS = (InvalidInput, Forbidden, NotFound)


def _refused(request: Request, title: str, exc: Exception, status: int | None = None) -> Response:
    """The error page for a refused form: 403 forbidden, 404 not found, else 400; ``status`` 400 for a form
    whose choice names something that is not there (an assignee, a fingerprint), which is bad input, not a
    missing page."""
    if status is None:
        status = 403 if isinstance(exc, Forbidden) else 404 if isinstance(exc, NotFound) else 400
    return render(request, "error.html", {"title": title, "message": str(exc)}, status)


@router.post(ISSUE + "/assign")
def assign_issue(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    assignee: Annotated[str, Form()] = "",
) -> Response:
    user = view.viewer.user
    try:
        target = None if assignee in ("", NOBODY) else resolve_assignee(db, view.org_id, assignee)
    except _REFUSALS as exc:
        return _refused(request, "Nobody assigned", exc, 400)
    notifier = notifier_of(request, view)
    assign(
        db,
        view.org_id,
        view.project_id,
        issue_id,
        target,
        actor=user.email,
        actor_user_id=user.id,
        notifier=notifier,
    )
    return _back(view, issue_id, "#assignee")


@router.post(ISSUE + "/watch")
def watch_issue(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    watch: Annotated[str, Form()] = "1",
) -> Response:
    """Hear of the issue's comments without being its assignee (or stop)."""
    set_watching(db, view.org_id, view.project_id, issue_id, view.viewer.user.id, watch == "1")
    return _back(view, issue_id, "#assignee")


@router.post(ISSUE + "/comments")
def comment_issue(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    body: Annotated[str, Form()] = "",
) -> Response:
    user = view.viewer.user
    try:
        row = add_comment(
            db,
            view.org_id,
            view.project_id,
            issue_id,
            body,
            author=user.email,
            author_user_id=user.id,
            notifier=notifier_of(request, view),
        )
    except _REFUSALS as exc:
        return _refused(request, "Comment not added", exc)
    return _back(view, issue_id, f"#comment-{row.id}")


@router.post(ISSUE + "/comments/{comment_id}/edit")
def edit_issue_comment(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    comment_id: int,
    body: Annotated[str, Form()] = "",
) -> Response:
    try:
        edit_comment(
            db,
            view.org_id,
            view.project_id,
            issue_id,
            comment_id,
            body,
            author=view.viewer.user.email,
            notifier=notifier_of(request, view),
        )
    except _REFUSALS as exc:
        return _refused(request, "Comment unchanged", exc)
    return _back(view, issue_id, f"#comment-{comment_id}")


@router.post(ISSUE + "/comments/{comment_id}/delete")
def delete_issue_comment(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    comment_id: int,
) -> Response:
    try:
        delete_comment(db, view.org_id, view.project_id, issue_id, comment_id, author=view.viewer.user.email)
    except _REFUSALS as exc:
        return _refused(request, "Comment kept", exc)
    return _back(view, issue_id, "#issue-history")


@router.post(ISSUE + "/split")
def split_issue(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    fingerprints: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Give the chosen merged fingerprints their own issue back (the "Merged issues" section's Split out)."""
    user = view.viewer.user
    try:
        split(
            db,
            view.warehouse,
            view.org_id,
            issue_id,
            fingerprints=fingerprints or [],
            actor=user.email,
            actor_user_id=user.id,
            hold_landing=partial(landing_held, app_settings(request)),
        )
    except Conflict as exc:  # another merge or split of the project's issues is running
        return _refused(request, "Nothing split", exc, 409)
    except _REFUSALS as exc:
        return _refused(request, "Nothing split", exc, 400)
    return _back(view, issue_id, "?done=split#merged-issues")
