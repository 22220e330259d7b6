"""The tools an agent sees: name, the core function that answers, whether it writes, and a description an
agent can act on. Argument descriptions are shared by name (``project`` means the same in every tool)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stacklens.agents import tools_issues, tools_traces, tools_views, tools_write


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., dict[str, Any]]
    writes: bool
    description: str


RANGES = "24h, 7d, 14d, 30d or 90d"
ARGUMENTS = {
    "project": "The project's slug (list_issues' answers and the dashboard's URLs name it).",
    "status": "Issue status.",
    "query": "Free text over the title and culprit (issues) or the body and attributes (logs); "
    "`key:value` terms match tags.",
    "environment": "Only this environment (e.g. production); empty: all.",
    "release": "Only this release; empty: all.",
    "level": "Only this level (error, warning, fatal, …).",
    "range": f"The window: {RANGES} (issues also 1h); empty: the view's default.",
    "sort": "last_seen, first_seen, events or users.",
    "cursor": "next_cursor of the previous answer, for the next page.",
    "limit": "Rows per page.",
    "issue_id": "The issue's id (decimal string).",
    "page": "Page of the markdown (from 1; the answer's covers.pages says how many).",
    "event_id": "The event's id (32 hex digits).",
    "version": "One release's version; empty: every release of the window.",
    "browser": "Only this browser.",
    "severity": "trace, debug, info, warn, error, fatal; several comma-separated.",
    "service": "Only this service.",
    "trace_id": "32 hex digits: the records of one trace.",
    "question": 'An Explore question: {"dataset": "errors" | "page_loads" | "api_calls" | "logs" | …, '
    '"project", "filters": [{"field", "op", "value"}], "group_by": [...], "aggregates": [{"fn", "metric"}], '
    '"range", "limit"} — the body of POST /api/query.',
    "assignee": "An e-mail of a member, or #team; leave out to keep the assignee.",
    "unassign": "true: remove the assignee.",
    "body": "The comment in markdown (mention members with @name).",
    "text": "The annotation's text (shown on every time chart).",
    "time": "ISO 8601 time of the annotation (default now).",
    "tags": "Tags of the annotation.",
}

TOOLS = (
    ToolSpec(
        "list_issues",
        tools_issues.list_issues,
        False,
        "List and search a project's issues with the issue list's filters (status, text and tag search, "
        "environment, release, level, window, sort). Each issue has its events and users in the window. "
        "Use first to find what is failing; then get_issue.",
    ),
    ToolSpec(
        "get_issue",
        tools_issues.get_issue,
        False,
        "One issue with its latest event as markdown: figures, exception chain with in-app frames first, "
        "request and tags; at most 8 KB a page (covers.pages says how many).",
    ),
    ToolSpec(
        "issue_events",
        tools_issues.issue_events,
        False,
        "An issue's events, newest first (id, time, environment, release, user, URL), paginated.",
    ),
    ToolSpec("get_event", tools_issues.get_event, False, "One event by id: its issue, message and tags."),
    ToolSpec(
        "issue_replays",
        tools_issues.issue_replays,
        False,
        "The session replays of an issue's newest events (browser SDK): replay id and the second where "
        "the error happens, to watch what the user did before it.",
    ),
    ToolSpec(
        "release_health",
        tools_views.releases,
        False,
        "Release health: per release sessions, crash-free sessions and users, adoption, errors per 1k page "
        "loads, new issues, load p75, API p95 and the regression verdict against the release before.",
    ),
    ToolSpec(
        "performance_overview",
        tools_views.performance_overview,
        False,
        "The performance overview: performance score and the p75 of each web vital with ratings and sample "
        "counts, and the pages with the biggest opportunity.",
    ),
    ToolSpec(
        "page_vitals",
        tools_views.page_vitals,
        False,
        "Per page (or one page, by its route): views, load time, TTFB, web vitals, score.",
    ),
    ToolSpec(
        "get_trace",
        tools_traces.get_trace,
        False,
        "One distributed trace as a tree: every span from browser, servers and OTLP with service, offset, "
        "duration and the critical path, with the trace's errors and logs tied to their spans.",
    ),
    ToolSpec("budgets", tools_views.budgets, False, "A project's performance budgets with their status."),
    ToolSpec(
        "search_logs",
        tools_views.logs,
        False,
        "Search a project's log records (text, severity, service, trace), newest first.",
    ),
    ToolSpec(
        "monitors",
        tools_views.monitors,
        False,
        "A project's cron and uptime monitors: status, schedule, next expected run, last check-in.",
    ),
    ToolSpec(
        "explore",
        tools_views.explore,
        False,
        "Ask an Explore question (group, filter, aggregate any dataset) under the query budgets.",
    ),
    ToolSpec(
        "update_issue",
        tools_write.update_issue,
        True,
        "Resolve, ignore or reopen an issue (status), and/or assign it. Needs scope write.",
    ),
    ToolSpec("comment_on_issue", tools_write.comment, True, "Comment on an issue. Needs scope write."),
    ToolSpec(
        "annotate",
        tools_write.annotate,
        True,
        "Put an annotation on the time charts (a deploy, an incident). Needs scope write.",
    ),
)
