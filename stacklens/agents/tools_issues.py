"""The issue tools: the list with the issue list's filters, one issue with its latest event as markdown, an
issue's events, one event. Answers carry what they cover (project, window, counts) and the figures the
issue pages show (the same reads: :mod:`stacklens.issues.reads`, :mod:`stacklens.issues.events`)."""

from __future__ import annotations

from typing import Any

from stacklens.agents.context import ToolContext, iso
from stacklens.agents.markdown import event_markdown, paginate
from stacklens.agents.untrusted import NOTE, fence
from stacklens.control.issue_merges import has_merges
from stacklens.control.models import Organization
from stacklens.control.projects_settings import in_app_rules
from stacklens.errors import NotFound
from stacklens.issues import payload_view as ev
from stacklens.issues.assignees import assignees_of
from stacklens.issues.events import IssueEvents, find_event
from stacklens.issues.reads import IssueFilters
from stacklens.issues.reads import list_issues as read_issues
from stacklens.replay.reads import replay_offset_for


def list_issues(
    ctx: ToolContext,
    project: str,
    status: str = "unresolved",
    query: str = "",
    environment: str = "",
    release: str = "",
    level: str = "",
    range: str = "14d",
    sort: str = "last_seen",
    cursor: str = "",
    limit: int = 25,
) -> dict[str, Any]:
    found = ctx.project(project)
    filters = IssueFilters(status, environment, release, level, "", range, query, sort, cursor, limit)
    window = filters.validate().window()
    rows, next_cursor = read_issues(ctx.warehouse, ctx.org_id, found.id, filters, window)
    assigned = assignees_of(ctx.session, ctx.org_id, found.id, [int(r["issue_id"]) for r in rows])
    issues = []
    for r in rows:
        assignee = assigned.get(int(r["issue_id"]))
        issues.append(
            {
                "id": str(r["issue_id"]),
                "title": fence(r["title"]),
                "culprit": fence(r["culprit"]),
                "level": r["level"],
                "status": r["status"],
                "events": int(r["events"]),
                "users": int(r.get("users", r.get("users_affected", 0))),
                "first_seen": iso(r["first_seen"]),
                "last_seen": iso(r["last_seen"]),
                "assignee": assignee.label if assignee else None,
            }
        )
    return {
        "covers": {
            "project": found.slug,
            "status": status,
            "range": range,
            "since": iso(window.since),
            "until": iso(window.until),
            "filters": {"query": query, "environment": environment, "release": release, "level": level},
            "count": len(issues),
            "counts_are": "events and users within the window, as the issue list shows",
        },
        "issues": issues,
        "next_cursor": next_cursor,
        "untrusted": NOTE,
    }


def get_issue(ctx: ToolContext, issue_id: str, page: int = 1) -> dict[str, Any]:
    project, summary = ctx.issue(issue_id)
    merged = has_merges(ctx.session, ctx.org_id, project.id, int(issue_id))
    events = IssueEvents(ctx.warehouse, ctx.org_id, project.id, int(issue_id), summary["fingerprint"], merged)
    latest = events.latest()
    row = events.get(latest) if latest else None
    text = event_markdown(dict(summary), project.slug, row, in_app_rules(ctx.session, project.id))
    piece = paginate(text, page)
    return {
        "covers": {
            "project": project.slug,
            "issue_id": str(issue_id),
            "event_id": row["event_id"] if row else None,
            "page": piece.page,
            "pages": piece.pages,
        },
        "markdown": piece.text,
        "untrusted": NOTE,
    }


def issue_events(ctx: ToolContext, issue_id: str, cursor: str = "", limit: int = 25) -> dict[str, Any]:
    project, summary = ctx.issue(issue_id)
    merged = has_merges(ctx.session, ctx.org_id, project.id, int(issue_id))
    events = IssueEvents(ctx.warehouse, ctx.org_id, project.id, int(issue_id), summary["fingerprint"], merged)
    rows, next_cursor = events.history(cursor=cursor, limit=limit)
    out = [
        {
            "event_id": r["event_id"],
            "timestamp": iso(r["timestamp"]),
            "environment": r["environment"],
            "release": r["release"],
            "user": fence(r["user_email"] or r["user_id"] or r["user_name"] or r["user_ip"]),
            "url": fence(r["request_url"]),
        }
        for r in rows
    ]
    return {
        "covers": {
            "project": project.slug,
            "issue_id": str(issue_id),
            "count": len(out),
            "order": "newest first",
        },
        "events": out,
        "next_cursor": next_cursor,
        "untrusted": NOTE,
    }


def get_event(ctx: ToolContext, event_id: str) -> dict[str, Any]:
    projects = {p.id: p for p in ctx.projects()}
    found = find_event(ctx.warehouse, ctx.org_id, list(projects), event_id)
    if found is None:
        raise NotFound(f"event_id: no event {event_id!r} in this organization")
    events = IssueEvents(ctx.warehouse, ctx.org_id, found.project_id, found.issue_id, found.fingerprint)
    row = events.get(found.event_id)
    if row is None:
        raise NotFound(f"event_id: no event {event_id!r} in this organization")
    payload = ev.load_payload(row["payload"])
    return {
        "covers": {"project": projects[found.project_id].slug, "issue_id": str(found.issue_id)},
        "event_id": row["event_id"],
        "timestamp": iso(row["timestamp"]),
        "environment": row["environment"],
        "release": row["release"],
        "message": fence(ev.message_text(payload)),
        "tags": [[k, fence(v)] for k, v in ev.tags(payload, row)],
        "untrusted": NOTE,
    }


REPLAY_EVENTS = 10  # the newest events looked at for their replay (each a read of its payload)


def issue_replays(ctx: ToolContext, issue_id: str) -> dict[str, Any]:
    """The replays of an issue's newest events: for each event the browser SDK tagged with a replay whose
    recording covers the error, the replay and the second of it where the error happens (as the issue
    page's "View Replay" link)."""
    project, summary = ctx.issue(issue_id)
    merged = has_merges(ctx.session, ctx.org_id, project.id, int(issue_id))
    events = IssueEvents(ctx.warehouse, ctx.org_id, project.id, int(issue_id), summary["fingerprint"], merged)
    rows, _ = events.history(limit=REPLAY_EVENTS)
    org_slug = ctx.session.get(Organization, ctx.org_id).slug  # type: ignore[union-attr]
    found: list[dict[str, Any]] = []
    for history in rows:
        row = events.get(history["event_id"])
        if row is None:
            continue
        tags = ev.load_payload(row["payload"]).get("tags")
        if isinstance(tags, list):  # the SDKs send tags as an object or as [key, value] pairs
            tags = {t[0]: t[1] for t in tags if isinstance(t, list | tuple) and len(t) == 2}
        replay_id = tags.get("replayId") if isinstance(tags, dict) else None
        if not isinstance(replay_id, str):
            continue
        offset = replay_offset_for(ctx.warehouse, ctx.org_id, project.id, replay_id, row["timestamp"])
        if offset is None:
            continue
        replay_hex = replay_id.replace("-", "").lower()
        found.append(
            {
                "replay_id": replay_hex,
                "event_id": row["event_id"],
                "error_at_s": round(offset, 1),
                "page": f"/orgs/{org_slug}/projects/{project.slug}/replays/{replay_hex}?t={offset:.1f}",
            }
        )
    return {
        "covers": {
            "project": project.slug,
            "issue_id": str(issue_id),
            "events_looked_at": len(rows),
            "count": len(found),
        },
        "replays": found,
    }
