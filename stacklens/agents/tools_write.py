"""The write tools (scope ``write``, and a role that writes): change an issue's status or assignee, comment
on it, annotate the charts. Each is recorded as the member's own change (history, activity log), as the
pages record theirs."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from stacklens import annotations as notes
from stacklens.agents.context import ToolContext
from stacklens.errors import InvalidInput
from stacklens.issues.actions import StatusRequest, apply_status, record_status_activity
from stacklens.issues.assignees import assign_text, assignees_of
from stacklens.issues.comments import add_comment
from stacklens.issues.notifications import notifier_for
from stacklens.json_values import plain

STATUSES = ("resolved", "unresolved", "ignored")


def update_issue(
    ctx: ToolContext, issue_id: str, status: str = "", assignee: str | None = None, unassign: bool = False
) -> dict[str, Any]:
    ctx.require_write()
    project, _ = ctx.issue(issue_id)
    if not status and assignee is None and not unassign:
        raise InvalidInput("status: send status, assignee or unassign")
    if status and status not in STATUSES:
        raise InvalidInput(f"status: one of {', '.join(STATUSES)}")
    number = int(issue_id)
    if assignee is not None or unassign:
        notifier = notifier_for(ctx.settings, ctx.warehouse)
        assign_text(
            ctx.session,
            ctx.org_id,
            project.id,
            number,
            None if unassign else assignee,
            actor=ctx.actor,
            actor_user_id=ctx.identity.user_id,
            notifier=notifier,
        )
    if status:
        refused = apply_status(
            ctx.warehouse, ctx.org_id, project.id, number, StatusRequest(status), ctx.actor
        )
        if refused:
            raise InvalidInput(f"status: {refused}")
        record_status_activity(
            ctx.session,
            ctx.org_id,
            project.id,
            number,
            status,
            actor=ctx.actor,
            actor_user_id=ctx.identity.user_id,
        )
    _, summary = ctx.issue(issue_id)
    current = assignees_of(ctx.session, ctx.org_id, project.id, [number]).get(number)
    return {
        "covers": {"project": project.slug, "issue_id": str(issue_id)},
        "status": summary["status"],
        "assignee": current.label if current else None,
    }


def comment(ctx: ToolContext, issue_id: str, body: str) -> dict[str, Any]:
    ctx.require_write()
    project, _ = ctx.issue(issue_id)
    row = add_comment(
        ctx.session,
        ctx.org_id,
        project.id,
        int(issue_id),
        body,
        author=ctx.actor,
        author_user_id=ctx.identity.user_id,
        notifier=notifier_for(ctx.settings, ctx.warehouse),
    )
    return {"covers": {"project": project.slug, "issue_id": str(issue_id)}, "comment_id": row.id}


def annotate(
    ctx: ToolContext,
    text: str,
    project: str = "",
    release: str = "",
    time: str = "",
    tags: list[str] | None = None,
) -> dict[str, Any]:
    ctx.require_write()
    body: dict[str, Any] = {"text": text}
    if project:
        body["project"] = ctx.project(project).slug
    if release:
        body["release"] = release
    if time:
        body["time"] = time
    if tags:
        body["tags"] = tags
    note = notes.create_annotation(ctx.session, ctx.org_id, body)
    return {"covers": {"project": project or "all projects"}, "annotation": plain(asdict(note))}
