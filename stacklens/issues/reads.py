"""Issue-list and issue-detail reads shared by the pages and the JSON API.

Every function takes ``org_id`` and ``project_id`` from the caller's resolved project (never from a URL) and
runs a named query from ``warehouse_sql/queries``; nothing here formats data into SQL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, TypedDict, cast

from clickhouse_connect.driver.client import Client

from stacklens.errors import InvalidInput
from stacklens.issues.figures import NONE, Dimensions, window_figures, window_params
from stacklens.metrics import windows
from stacklens.metrics.windows import Window
from stacklens.pagination import InvalidCursor, decode_cursor, encode_cursor
from stacklens.warehouse.queries import run_query

STATUS_TABS: dict[str, tuple[str, ...]] = {
    "unresolved": ("unresolved", "regressed"),
    "resolved": ("resolved", "resolved_next_release"),
    "ignored": ("ignored",),
    "all": ("unresolved", "regressed", "resolved", "resolved_next_release", "ignored"),
}
SORTS = ("last_seen", "first_seen", "events", "users")
RANGES: dict[str, timedelta] = {
    "1h": timedelta(hours=1),
    "24h": timedelta(days=1),
    "7d": timedelta(days=7),
    "14d": timedelta(days=14),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
}
DIMENSIONS = ("environment", "release", "level", "service")
# `key:value` or `key:"a value"`; keys as Sentry tags allow them.
_TERM = re.compile(r'(?<!\S)([A-Za-z_][\w.\-]{0,63}):("([^"]*)"|\S+)')
MAX_PAGE = 100
DEFAULT_PAGE = 25
PAGE_SIZES = (10, 25, 50, 100)  # the list page's "per page" choices (the JSON API takes any 1..MAX_PAGE)


class BadListRequest(InvalidInput):
    """A filter, sort, range or cursor the list cannot use; the message says which and why."""


@dataclass
class IssueFilters:
    status: str = "unresolved"
    environment: str = ""
    release: str = ""
    level: str = ""
    service: str = ""
    range: str = "14d"
    query: str = ""
    sort: str = "last_seen"
    cursor: str = ""
    limit: int = DEFAULT_PAGE
    tags: dict[str, str] = field(default_factory=dict)
    text: str = ""
    # From the search box: "" (anyone or no one), "none" (`unassigned`), "me", "#team" or an e-mail
    # (`assigned:…`); the caller turns it into issue ids (stacklens.issues.assignees.assignee_filter).
    assigned: str = ""

    def validate(self) -> IssueFilters:
        if self.status not in STATUS_TABS:
            raise BadListRequest(f"status must be one of {', '.join(STATUS_TABS)}")
        if self.sort not in SORTS:
            raise BadListRequest(f"sort must be one of {', '.join(SORTS)}")
        if self.range not in RANGES:
            raise BadListRequest(f"range must be one of {', '.join(RANGES)}")
        if not 1 <= self.limit <= MAX_PAGE:
            raise BadListRequest(f"limit must be between 1 and {MAX_PAGE}")
        self.text, terms = parse_search(self.query)
        self.tags = {}
        self.assigned = ""
        words = self.text.split()
        if "unassigned" in words:  # a bare `unassigned` is the filter, not a word to find in titles
            self.assigned = "none"
            self.text = " ".join(w for w in words if w != "unassigned")
        for key, value in terms.items():
            if key in DIMENSIONS:
                setattr(self, key, value)
            elif key == "assigned":
                self.assigned = _assigned(value)
            elif key == "is" and value == "unassigned":
                self.assigned = "none"
            else:
                self.tags[key] = value
        return self

    def window(self, now: datetime | None = None) -> Window:
        """The range's window: rolling, up to ``now``, in whole minutes (stacklens.metrics.windows)."""
        return windows.rolling(RANGES[self.range], now)

    def dimensions(self) -> Dimensions:
        return Dimensions(self.environment, self.release, self.level, self.service)

    def params(self) -> dict[str, str]:
        """The query-string form (for links that keep the current filters)."""
        values = {
            "status": self.status,
            "environment": self.environment,
            "release": self.release,
            "level": self.level,
            "service": self.service,
            "range": self.range,
            "query": self.query,
            "sort": self.sort,
            "per_page": str(self.limit) if self.limit != DEFAULT_PAGE else "",
        }
        return {k: v for k, v in values.items() if v}


def _assigned(value: str) -> str:
    value = value.strip()
    if value in ("me", "none") or (value.startswith("#") and len(value) > 1) or "@" in value:
        return value
    raise BadListRequest(
        "assigned: use assigned:me, assigned:#team, assigned:someone@example.com or unassigned"
    )


def parse_search(query: str) -> tuple[str, dict[str, str]]:
    """Split a search box into free text and ``key:value`` terms (quotes allow spaces in a value)."""
    terms: dict[str, str] = {}

    def take(match: re.Match[str]) -> str:
        terms[match.group(1)] = match.group(3) if match.group(3) is not None else match.group(2)
        return " "

    text = _TERM.sub(take, query or "")
    return " ".join(text.split()), terms


class IssueRow(TypedDict):
    """One issue of the list (issues/list.sql): its events and users in the window (issues/window_figures.sql,
    the read the issue page and the API make), its own first and last seen, title and live status."""

    issue_id: int
    title: str
    culprit: str
    level: str
    platform: str
    status: str
    events: int
    users: int
    first_seen: datetime
    last_seen: datetime
    sort_value: float  # what the page is sorted by, as the next page's cursor holds it


def list_issues(
    client: Client,
    org_id: int,
    project_id: int,
    filters: IssueFilters,
    window: Window | None = None,
    *,
    only_ids: list[int] | None = None,
    exclude_ids: Sequence[int] = (),
) -> tuple[list[IssueRow], str | None]:
    """One page of issues and the cursor of the next page (``None`` on the last page); ``window``: the range's
    window as the caller showed it (else cut now). ``only_ids`` keeps only those issues (``[]``: none),
    ``exclude_ids`` drops those: the ``assigned:`` filters, resolved by the caller in the control store."""
    if only_ids is not None and not only_ids:
        return [], None
    window = window or filters.window()
    cursor_value, cursor_id = 0.0, 0
    if filters.cursor:
        try:
            value, key, sort = decode_cursor(filters.cursor, float, int, str)
        except InvalidCursor as exc:
            raise BadListRequest(str(exc)) from exc
        if sort != filters.sort:
            raise BadListRequest("cursor belongs to another sort order; start again from the first page")
        cursor_value, cursor_id = float(value), int(key)
    rows = cast(  # the rows carry the columns issues/list.sql names
        list[IssueRow],
        run_query(
            client,
            "issues/list",
            {
                "org_id": org_id,
                "project_id": project_id,
                **window_params(window, filters.dimensions()),
                "issue_ids": sorted(int(i) for i in only_ids or []),
                "exclude_ids": sorted(int(i) for i in exclude_ids),
                "tag_keys": list(filters.tags),
                "tag_values": list(filters.tags.values()),
                "statuses": list(STATUS_TABS[filters.status]),
                "query": filters.text,
                "sort": filters.sort,
                "cursor_value": cursor_value,
                "cursor_id": cursor_id,
                "limit": filters.limit + 1,
            },
        ),
    )
    next_cursor = None
    if len(rows) > filters.limit:
        rows = rows[: filters.limit]
        last = rows[-1]
        next_cursor = encode_cursor(last["sort_value"], int(last["issue_id"]), filters.sort)
    # The rows' figures are the one read of them (the issue page and the API make the same): the list query
    # counted events for its sort and filter, and distinct users only for the users sort.
    figures = window_figures(
        client, org_id, project_id, window, [int(row["issue_id"]) for row in rows], filters.dimensions()
    )
    for row in rows:
        found = figures.get(int(row["issue_id"]), NONE)
        row["events"], row["users"] = found.events, found.users
    return rows, next_cursor


def daily_counts(
    client: Client, org_id: int, project_id: int, issue_ids: list[int], filters: IssueFilters
) -> dict[int, list[int]]:
    """Per issue, one count per day of the shown range (zeros filled), oldest first: the sparklines."""
    if not issue_ids:
        return {}
    window = filters.window()
    first, last = window.since.date(), (window.until - timedelta(milliseconds=1)).date()
    rows = run_query(
        client,
        "issues/sparklines",
        {
            "org_id": org_id,
            "project_id": project_id,
            "issue_ids": issue_ids,
            "since": first,
            "until": last,
            "environment": filters.environment,
            "release": filters.release,
            "level": filters.level,
            "service": filters.service,
        },
    )
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    index = {day: i for i, day in enumerate(days)}
    counts = {issue_id: [0] * len(days) for issue_id in issue_ids}
    for row in rows:
        day = row["day"] if isinstance(row["day"], date) else date.fromisoformat(str(row["day"]))
        if day in index and row["issue_id"] in counts:
            counts[row["issue_id"]][index[day]] = int(row["events"])
    return counts


def facet_values(client: Client, org_id: int, project_id: int, filters: IssueFilters) -> dict[str, list[str]]:
    window = filters.window()
    rows = run_query(
        client,
        "issues/facet_values",
        {
            "org_id": org_id,
            "project_id": project_id,
            "since": window.since.date(),
            "until": window.until.date(),
        },
    )
    row = rows[0] if rows else {}
    return {
        "environment": sorted(row.get("environments") or []),
        "release": sorted(row.get("releases") or [], reverse=True),
        "level": sorted(row.get("levels") or []),
        "service": sorted(row.get("services") or []),
    }


class IssueSummary(TypedDict):
    """One issue as the list shows it: a row of the live ``issue_list`` view (insert-time figures, workflow
    status), what the issue page, the API's issue and a shared issue read."""

    org_id: int
    project_id: int
    issue_id: int
    fingerprint: str
    title: str
    culprit: str
    level: str
    platform: str
    exception_type: str
    first_seen: datetime
    last_seen: datetime
    last_received: datetime
    events: int
    users_affected: int
    first_release: str
    last_release: str
    environments: list[str]
    services: list[str]
    stored_status: str  # the status written in issue_state ('' when none)
    status: str  # the status shown: derived states (regressed, an ignore that ended) applied
    status_changed_at: datetime
    status_changed_by: str
    resolved_release: str
    ignore_until_events: int
    ignore_until: datetime | None


def issue_summary(client: Client, org_id: int, project_id: int, issue_id: int) -> IssueSummary | None:
    ids = {"org_id": org_id, "project_id": project_id, "issue_id": issue_id}
    rows = run_query(client, "issues/summary", ids)
    return cast(IssueSummary, rows[0]) if rows else None


def issue_titles(client: Client, org_id: int, project_id: int, issue_ids: list[int | str]) -> dict[int, str]:
    """Title of each issue that exists among ``issue_ids`` (of this organization's project only)."""
    ids = sorted({int(i) for i in issue_ids})
    if not ids:
        return {}
    rows = run_query(client, "issues/titles", {"org_id": org_id, "project_id": project_id, "issue_ids": ids})
    return {int(row["issue_id"]): str(row["title"]) for row in rows}


@dataclass(frozen=True)
class RelatedIssue:
    """An issue related to another for one reason (mart ``related_issues``)."""

    related_issue_id: int
    title: str
    culprit: str
    status: str
    events: int
    strength: float  # Jaccard index of the two issues' sets for the reason, in (0, 1]
    shared: int  # how many users, windows, frames or releases the two share
    also: tuple[str, ...]  # the other reasons the two are related by


def related_issues(
    client: Client, org_id: int, project_id: int, issue_id: int
) -> dict[str, list[RelatedIssue]]:
    """Related issues by reason, strongest first, ten per reason at most; "same_release" holds only issues
    that share something besides the release (a user, a 5-minute window or an in-app frame)."""
    grouped: dict[str, list[RelatedIssue]] = {}
    ids = {"org_id": org_id, "project_id": project_id, "issue_id": issue_id}
    for row in run_query(client, "issues/related", ids):
        grouped.setdefault(row["reason"], []).append(
            RelatedIssue(
                related_issue_id=int(row["related_issue_id"]),
                title=str(row["title"]),
                culprit=str(row["culprit"]),
                status=str(row["status"]),
                events=int(row["events"]),
                strength=float(row["strength"]),
                shared=int(row["shared"]),
                also=tuple(str(r) for r in row["also"]),
            )
        )
    return grouped


def status_history(client: Client, org_id: int, project_id: int, issue_id: int) -> list[dict[str, Any]]:
    ids = {"org_id": org_id, "project_id": project_id, "issue_id": issue_id}
    return run_query(client, "issues/history", ids)
