"""Issue workflow: statuses, legal transitions and their history, in one place.

Statuses a person can set: ``unresolved``, ``resolved``, ``resolved_next_release`` and ``ignored`` (optionally
until N more events and/or until a time). ``regressed`` is derived: the system sets it when a resolved issue
gets a new event (or, for ``resolved_next_release``, an event from a release other than the one the fix is
not in). An ignored issue whose condition is met goes back to ``unresolved``.

The current state lives in the warehouse table ``issue_state`` (ReplacingMergeTree, newest ``version`` wins)
and every change appends a row to ``issue_history``; both are written here and nowhere else. Readers join
``issue_state`` live (the ``issue_list`` view), so a change shows on the next page load.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, overload

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import load_query

UNRESOLVED = "unresolved"
RESOLVED = "resolved"
RESOLVED_NEXT_RELEASE = "resolved_next_release"
IGNORED = "ignored"
REGRESSED = "regressed"

SETTABLE_STATUSES: tuple[str, ...] = (UNRESOLVED, RESOLVED, RESOLVED_NEXT_RELEASE, IGNORED)
SYSTEM_ACTOR = "system"

# Which status may follow which, for a person's change. Setting the status an issue already has is refused
# (it would write a history row that says nothing). `regressed` is only ever set by the system.
LEGAL_TRANSITIONS: dict[str, frozenset[str]] = {
    UNRESOLVED: frozenset({RESOLVED, RESOLVED_NEXT_RELEASE, IGNORED}),
    REGRESSED: frozenset({UNRESOLVED, RESOLVED, RESOLVED_NEXT_RELEASE, IGNORED}),
    RESOLVED: frozenset({UNRESOLVED, IGNORED}),
    RESOLVED_NEXT_RELEASE: frozenset({UNRESOLVED, RESOLVED, IGNORED}),
    IGNORED: frozenset({UNRESOLVED, RESOLVED, RESOLVED_NEXT_RELEASE}),
}

STATE_COLUMNS = [
    "org_id",
    "project_id",
    "issue_id",
    "status",
    "ignore_until_events",
    "ignore_events_baseline",
    "ignore_until",
    "resolved_release",
    "changed_at",
    "changed_by",
    "version",
]
HISTORY_COLUMNS = [
    "org_id",
    "project_id",
    "issue_id",
    "at",
    "actor",
    "from_status",
    "to_status",
    "reason",
    "release",
    "ignore_until_events",
    "ignore_until",
]


class IllegalTransition(ValueError):
    """The requested status change is not allowed from the issue's current status; the message says why."""


@dataclass(frozen=True)
class IssueState:
    org_id: int
    project_id: int
    issue_id: int
    status: str = UNRESOLVED
    ignore_until_events: int = 0
    ignore_events_baseline: int = 0
    ignore_until: datetime | None = None
    resolved_release: str = ""
    changed_at: datetime | None = None
    changed_by: str = ""


@dataclass(frozen=True)
class HistoryRow:
    at: datetime
    actor: str
    from_status: str
    to_status: str
    reason: str
    release: str
    ignore_until_events: int
    ignore_until: datetime | None


_version_lock = threading.Lock()
_last_version = 0


def _next_version() -> int:
    """Strictly increasing nanosecond stamps in this process, so two quick changes never tie."""
    global _last_version
    with _version_lock:
        _last_version = max(time.time_ns(), _last_version + 1)
        return _last_version


@overload
def _utc(value: datetime) -> datetime: ...
@overload
def _utc(value: None) -> None: ...
def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _state_from_row(row: dict[str, Any]) -> IssueState:
    return IssueState(
        org_id=int(row["org_id"]),
        project_id=int(row["project_id"]),
        issue_id=int(row["issue_id"]),
        status=str(row["status"]),
        ignore_until_events=int(row["ignore_until_events"]),
        ignore_events_baseline=int(row["ignore_events_baseline"]),
        ignore_until=_utc(row["ignore_until"]),
        resolved_release=str(row["resolved_release"]),
        changed_at=_utc(row["changed_at"]),
        changed_by=str(row["changed_by"]),
    )


def current_states(
    client: Client, project_id: int, issue_ids: list[int] | tuple[int, ...]
) -> dict[int, IssueState]:
    """The stored state of each issue that has one (an issue missing from the result is ``unresolved``)."""
    if not issue_ids:
        return {}
    result = client.query(
        load_query("issues/stored_states"),
        parameters={"project_id": int(project_id), "issue_ids": [int(i) for i in issue_ids]},
    )
    states = (_state_from_row(dict(zip(result.column_names, row, strict=True))) for row in result.result_rows)
    return {state.issue_id: state for state in states}


def history(client: Client, project_id: int, issue_id: int) -> list[HistoryRow]:
    """Every status change of the issue, oldest first."""
    result = client.query(
        load_query("issues/status_changes"),
        parameters={"project_id": int(project_id), "issue_id": int(issue_id)},
    )
    return [
        HistoryRow(
            at=_utc(at),
            actor=str(actor),
            from_status=str(from_status),
            to_status=str(to_status),
            reason=str(reason),
            release=str(release),
            ignore_until_events=int(until_events),
            ignore_until=_utc(until),
        )
        for at, actor, from_status, to_status, reason, release, until_events, until in result.result_rows
    ]


def _issue_facts(client: Client, project_id: int, issue_id: int) -> tuple[int, str]:
    """The issue's live event count and latest release (from the insert-time counters)."""
    rows = client.query(
        load_query("issues/live_counts"),
        parameters={"project_id": int(project_id), "issue_id": int(issue_id)},
    ).result_rows
    if not rows:
        return 0, ""
    return int(rows[0][0] or 0), str(rows[0][1] or "")


def write_state(
    client: Client, previous: IssueState, new: IssueState, *, reason: str = "", release: str = ""
) -> None:
    """Store ``new`` as the current state and append the history row (used by this module and the system
    rules)."""
    at = new.changed_at or datetime.now(UTC)
    client.insert(
        "issue_state",
        [
            [
                new.org_id,
                new.project_id,
                new.issue_id,
                new.status,
                new.ignore_until_events,
                new.ignore_events_baseline,
                new.ignore_until,
                new.resolved_release,
                at,
                new.changed_by,
                _next_version(),
            ]
        ],
        column_names=STATE_COLUMNS,
    )
    client.insert(
        "issue_history",
        [
            [
                new.org_id,
                new.project_id,
                new.issue_id,
                at,
                new.changed_by,
                previous.status,
                new.status,
                reason,
                release or new.resolved_release,
                new.ignore_until_events,
                new.ignore_until,
            ]
        ],
        column_names=HISTORY_COLUMNS,
    )


def change_status(
    client: Client,
    *,
    org_id: int,
    project_id: int,
    issue_id: int,
    status: str,
    actor: str,
    ignore_until_events: int | None = None,
    ignore_until: datetime | None = None,
    release: str | None = None,
) -> IssueState:
    """Move an issue to ``status`` on behalf of ``actor`` and record it; raise :class:`IllegalTransition`.

    ``ignore_until_events`` / ``ignore_until`` only go with ``ignored``; ``release`` only with
    ``resolved_next_release`` (default: the issue's latest release — events from any other release regress
    it)."""
    if status == REGRESSED:
        raise IllegalTransition("regressed is set by the system when a resolved issue gets a new event")
    if status not in SETTABLE_STATUSES:
        raise IllegalTransition(f"unknown status {status!r}; use one of {', '.join(SETTABLE_STATUSES)}")
    if not actor or not actor.strip():
        raise IllegalTransition("a status change needs an actor")
    if status != IGNORED and (ignore_until_events is not None or ignore_until is not None):
        raise IllegalTransition("ignore_until_events and ignore_until only apply to the ignored status")
    if status != RESOLVED_NEXT_RELEASE and release is not None:
        raise IllegalTransition("release only applies to the resolved_next_release status")
    if ignore_until_events is not None and ignore_until_events < 1:
        raise IllegalTransition("ignore_until_events must be a positive number of events")
    now = datetime.now(UTC)
    if ignore_until is not None and _utc(ignore_until) <= now:
        raise IllegalTransition("ignore_until must be in the future")

    current = current_states(client, project_id, [issue_id]).get(issue_id) or IssueState(
        org_id, project_id, issue_id
    )
    if current.org_id != org_id:
        # Never reveal or touch another organization's issue: it looks like an issue with no state.
        current = IssueState(org_id, project_id, issue_id)
    effective = effective_status(client, current)
    if status not in LEGAL_TRANSITIONS[effective]:
        raise IllegalTransition(f"cannot change an issue from {effective} to {status}")

    events, last_release = _issue_facts(client, project_id, issue_id)
    new = IssueState(
        org_id=org_id,
        project_id=project_id,
        issue_id=issue_id,
        status=status,
        ignore_until_events=int(ignore_until_events or 0),
        ignore_events_baseline=events if status == IGNORED else 0,
        ignore_until=_utc(ignore_until),
        resolved_release=(release if release is not None else last_release)
        if status == RESOLVED_NEXT_RELEASE
        else "",
        changed_at=now,
        changed_by=actor.strip(),
    )
    write_state(client, IssueState(org_id, project_id, issue_id, status=effective), new)
    return new


def effective_status(client: Client, state: IssueState) -> str:
    """The status readers see: the stored one with the derived rules applied (see the ``issue_list`` view)."""
    if state.changed_at is None:
        return state.status
    rows = client.query(
        load_query("issues/effective_status"),
        parameters={"project_id": state.project_id, "issue_id": state.issue_id},
    ).result_rows
    return str(rows[0][0]) if rows else state.status
