"""The issue page: latest event first with older / newer, every part of the error details, history,
related issues, the events-over-time chart, event comparison and the status actions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.explore_links import issue_tag_link
from dashboards.figures import events_over_time_figure
from dashboards.issue_trackers import tracker_context
from dashboards.marker_figures import mark_charts
from dashboards.rendering import query_url, render
from dashboards.routers.feedback import issue_feedback_context
from dashboards.routers.issue_team import team_context
from dashboards.security import check_csrf
from stacklens.control.projects_settings import in_app_rules
from stacklens.control.share_links import issue_links
from stacklens.errors import InvalidInput
from stacklens.ingest.in_app import NO_RULES, InAppRules
from stacklens.issues import frame_alignment, payload_breadcrumbs, payload_compare, payload_exceptions
from stacklens.issues import payload_view as ev
from stacklens.issues.actions import (
    ACTIONS,
    StatusRequest,
    apply_status,
    parse_ignore,
    record_status_activity,
)
from stacklens.issues.events import EventRow, IssueEvents
from stacklens.issues.figures import NONE, window_figures
from stacklens.issues.merge_reads import merged_into
from stacklens.issues.reads import RANGES, BadListRequest, IssueSummary, issue_summary, related_issues
from stacklens.issues.workflow import LEGAL_TRANSITIONS, IllegalTransition
from stacklens.logs.search import trace_logs
from stacklens.metrics import windows
from stacklens.metrics.issue_figures import window_note
from stacklens.performance.waterfall import pageload_of_trace
from stacklens.replay.reads import replay_offset_for
from stacklens.sourcemaps.symbolicate import Resolver, symbolicate
from stacklens.traces.links import event_trace

router = APIRouter(include_in_schema=False)
ISSUE = "/orgs/{org_slug}/projects/{project_slug}/issues/{issue_id}"
NOTICES = {
    "share_revoked": "Share link revoked: it no longer opens anything.",
    "linked": "Linked issue created.",
    "link_existing": "The linked issue was already there: nothing new was created.",
    "linked_existing": "Existing ticket linked.",
    "unlinked": "Link removed (the ticket stays in the tracker).",
    "merged": "Issues merged: their events, users and figures are this issue's now (see Merged issues).",
    "split": "Split out: the chosen fingerprints have their own issues again.",
}
RELATED_REASONS = {
    "same_user": "Same user",
    "same_time_window": "Same time window",
    "similar_stack": "Similar stack trace",
    "same_release": "Same release",
}


def load_issue(view: CurrentProject, issue_id: int) -> tuple[IssueSummary, IssueEvents]:
    client = view.warehouse
    summary = issue_summary(client, view.org_id, view.project_id, issue_id)
    if summary is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return summary, IssueEvents(
        client, view.org_id, view.project_id, issue_id, summary.get("fingerprint") or ""
    )


def event_parts(row: EventRow, maps: Resolver | None = None, in_app: InAppRules = NO_RULES) -> dict[str, Any]:
    """Every part of the error details for one stored event; with ``maps``, JavaScript frames are shown at
    their original file and line through the project's uploaded source maps (applied now, not at ingest, so
    a map uploaded after the error still fixes it); ``in_app``: the project's in-app module prefixes."""
    payload = ev.load_payload(row.get("payload", ""))
    chain = payload_exceptions.exceptions(payload, in_app)
    if maps is not None:
        symbolicate(maps, payload, chain)
    extra = payload.get("extra") if isinstance(payload.get("extra"), dict) else {}
    crumbs = payload_breadcrumbs.breadcrumbs(payload)
    return {
        "row": row,
        "payload": payload,
        "chain": chain,
        "copy_text": payload_exceptions.copy_text(chain) or row.get("title", ""),
        "request_data": ev.request_data(payload),
        "user_info": ev.user_info(payload),
        "breadcrumbs": crumbs,
        "categories": payload_breadcrumbs.breadcrumb_categories(crumbs),
        "tags": ev.tags(payload, row),
        "extra": extra,
        "environment_info": ev.environment_info(payload),
        "time_note": payload_breadcrumbs.time_note(payload),
    }


def _pageload_link(view: CurrentProject, parts: dict[str, Any] | None) -> str:
    """The waterfall of the page load that shares the event's trace (a browser error), when one was sent."""
    if parts is None:
        return ""
    contexts = parts["payload"].get("contexts")
    trace = contexts.get("trace") if isinstance(contexts, dict) else None
    trace_id = trace.get("trace_id") if isinstance(trace, dict) else None
    when = parts["row"].get("timestamp")
    if not isinstance(trace_id, str) or not isinstance(when, datetime):
        return ""
    event_id = pageload_of_trace(view.warehouse, view.org_id, view.project_id, trace_id[:64], when)
    if not event_id:
        return ""
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/performance/waterfall/{event_id}"


def _trace_logs(view: CurrentProject, parts: dict[str, Any] | None) -> dict[str, Any] | None:
    """The log records of the event's trace (within a day of the event), with the logs view's link to them."""
    if parts is None:
        return None
    contexts = parts["payload"].get("contexts")
    trace = contexts.get("trace") if isinstance(contexts, dict) else None
    trace_id = trace.get("trace_id") if isinstance(trace, dict) else None
    when = parts["row"].get("timestamp")
    if not isinstance(trace_id, str) or not isinstance(when, datetime):
        return None
    try:
        records = trace_logs(view.warehouse, view.org_id, view.project_id, trace_id[:64], when)
    except InvalidInput:  # not a trace id a log record can carry
        return None
    if not records:
        return None
    base = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/logs"
    return {"records": records, "link": query_url(base, {"trace_id": records[0].trace_id, "range": "90d"})}


def _replay_link(view: CurrentProject, parts: dict[str, Any] | None) -> str:
    """ "View Replay" for an error the browser SDK tagged with its replay (``tags.replayId``), only when a
    playable segment covers the error; it opens the player a few seconds before the error."""
    if parts is None:
        return ""
    tags = parts["payload"].get("tags")
    if isinstance(tags, list):  # the SDKs send tags as an object or as [key, value] pairs
        tags = {t[0]: t[1] for t in tags if isinstance(t, list | tuple) and len(t) == 2}
    replay_id = tags.get("replayId") if isinstance(tags, dict) else None
    when = parts["row"].get("timestamp")
    if not isinstance(replay_id, str) or not isinstance(when, datetime):
        return ""
    offset = replay_offset_for(view.warehouse, view.org_id, view.project_id, replay_id, when)
    if offset is None:
        return ""
    replay_hex = replay_id.replace("-", "").lower()
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/replays/{replay_hex}?t={offset:.1f}"


@router.get(ISSUE, response_class=HTMLResponse)
def issue_page(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    event: str = "",
    range: str = "14d",
    hcursor: str = "",
) -> Response:
    # An issue merged into another: its links (alerts, tickets, bookmarks) lead to the surviving issue. The
    # control-store look-up (indexed) comes first: most issues were never merged, and the page reads them
    # anyway.
    moved = merged_into(db, view.org_id, issue_id)
    if (
        moved is not None
        and moved[0] == view.project_id
        and issue_summary(view.warehouse, view.org_id, view.project_id, issue_id) is None
    ):
        base = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues"
        return RedirectResponse(f"{base}/{moved[1]}", status_code=301)
    return render(
        request, "issue_detail.html", issue_context(request, view, db, issue_id, event, range, hcursor)
    )


def issue_context(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    event: str = "",
    range: str = "14d",
    hcursor: str = "",
) -> dict[str, Any]:
    """Everything the issue page shows (the linked-issue actions re-render it with their outcome)."""
    summary, events = load_issue(view, issue_id)
    if range not in RANGES:
        range = "14d"
    latest_id = events.latest()
    event_id = event or latest_id
    row = events.get(event_id) if event_id else None
    if event and row is None:
        raise HTTPException(status_code=404, detail="Not Found")
    try:
        history, history_next = events.history(cursor=hcursor)
    except BadListRequest:
        history, history_next = events.history()
    newer, older = events.neighbours(row) if row else (None, None)
    # One window for the chart, the figures beside it and the Explore links: the list's
    # (stacklens.metrics.windows).
    window = windows.rolling(RANGES[range])
    since, until = window.naive
    figure = events_over_time_figure(events.over_time(since, until), since, until)
    # The project's releases first seen and its annotations over the chart's window.
    mark_charts(
        [figure],
        view.warehouse,
        db,
        view.org_id,
        view.viewer.org.slug,
        [view.project_id],
        window.since,
        window.until,
    )
    in_window = window_figures(view.warehouse, view.org_id, view.project_id, window, [issue_id]).get(
        issue_id, NONE
    )
    base = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues"
    maps = Resolver(view.warehouse, view.org_id, view.project_id)
    parts = event_parts(row, maps, in_app_rules(db, view.project_id)) if row else None
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "issue": summary,
        "allowed_moves": LEGAL_TRANSITIONS.get(str(summary.get("status")), frozenset()),
        "issue_path": f"{base}/{issue_id}",
        "list_path": base,
        "event": parts,
        "pageload_waterfall": _pageload_link(view, parts),
        "trace_id": event_trace(view.warehouse, view.org_id, parts["payload"]) if parts else "",
        "replay_link": _replay_link(view, parts),
        "trace_logs": _trace_logs(view, parts),
        "newer": newer,
        "older": older,
        "history": history,
        "history_next": history_next,
        "related": related_issues(view.warehouse, view.org_id, view.project_id, issue_id),
        "reasons": RELATED_REASONS,
        **team_context(view, db, issue_id),
        "figure": figure,
        "range": range,
        "ranges": list(RANGES),
        "window_figures": in_window,
        "window_note": window_note(RANGES[range]),
        "shared": False,
        "show_totals": True,
        "shared_window": None,
        "share_links": issue_links(db, view.org_id, view.project_id, issue_id),
        # A fixed notice chosen by code, so a crafted link cannot put its own words on the page.
        "message": NOTICES.get(request.query_params.get("done", ""), ""),
        **tracker_context(db, view.org_id, view.project_id, issue_id, summary, parts),
        "tag_explore": _tag_links(view, issue_id, parts, window.since, window.until),
        **issue_feedback_context(view, db, issue_id, row["event_id"] if row else None),
    }
    return context


def _tag_links(
    view: CurrentProject, issue_id: int, parts: dict[str, Any] | None, since: datetime, until: datetime
) -> dict[str, str]:
    """Per tag of the event, "Explore": the issue's events with that tag in the page's window."""
    if parts is None:
        return {}
    links = {}
    for key, value in parts["tags"]:
        link = issue_tag_link(
            view.viewer.org.slug,
            view.project.slug,
            issue_id,
            key,
            value,
            parts["row"],
            since,
            until,
        )
        if link:
            links[key] = link
    return links


@router.post(ISSUE + "/status")
def change_issue_status(
    request: Request,
    view: CurrentProject,
    db: Db,
    issue_id: int,
    action: Annotated[str, Form()] = "",
    ignore_kind: Annotated[str, Form()] = "forever",
    ignore_events: Annotated[str, Form()] = "",
    ignore_until: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    load_issue(view, issue_id)
    path = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues/{issue_id}"
    if action not in ACTIONS:
        return render(
            request,
            "error.html",
            {"title": "Unknown action", "message": "Choose one of the status actions."},
            400,
        )
    status = ACTIONS[action]
    try:
        until_events, until = (
            parse_ignore(ignore_kind, ignore_events, ignore_until) if status == "ignored" else (None, None)
        )
    except IllegalTransition as exc:
        return render(request, "error.html", {"title": "Cannot ignore", "message": str(exc)}, 400)
    request_ = StatusRequest(status, until_events, until)
    refused = apply_status(
        view.warehouse, view.org_id, view.project_id, issue_id, request_, view.viewer.user.email
    )
    if refused:
        return render(request, "error.html", {"title": "Status unchanged", "message": refused}, 409)
    user = view.viewer.user
    record_status_activity(
        db, view.org_id, view.project_id, issue_id, status, actor=user.email, actor_user_id=user.id
    )
    return RedirectResponse(path, status_code=303)


@router.get(ISSUE + "/compare", response_class=HTMLResponse)
def compare(request: Request, view: CurrentProject, issue_id: int, a: str = "", b: str = "") -> Response:
    summary, events = load_issue(view, issue_id)
    left, right = events.get(a), events.get(b)
    if left is None or right is None:
        message = "Pick two events of this issue in the event history to compare them."
        return render(request, "error.html", {"title": "Choose two events", "message": message}, 400)
    payloads = [ev.load_payload(row.get("payload", "")) for row in (left, right)]
    sides = [payload_compare.compare_view(p, row) for p, row in zip(payloads, (left, right), strict=True)]
    # The stacks aligned by function and file as a diff aligns lines (a deeper recursion is the frames only
    # one event has), not frame by frame at the same position.
    aligned = frame_alignment.align(*payloads)
    sections: list[tuple[str, list[tuple[str, str, str]]]] = []
    for name in sides[0]:
        if name in ("Stack trace", "Local variables"):
            sections.append((name, aligned.stack if name == "Stack trace" else aligned.local))
            continue
        keys = list(dict.fromkeys([*sides[0][name], *sides[1][name]]))
        lines = [(k, sides[0][name].get(k, ""), sides[1][name].get(k, "")) for k in keys]
        sections.append((name, lines))
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "issue": summary,
        "issue_path": f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues/{issue_id}",
        "left": left,
        "right": right,
        "sections": sections,
        "alignment": aligned.summary,
    }
    return render(request, "compare.html", context)
