"""Status changes from the pages and the JSON API, through the issue workflow (which records the history)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.issues.reads import issue_summary
from stacklens.issues.workflow import IllegalTransition, change_status

# The page's actions and the workflow status each one sets.
ACTIONS = {
    "resolve": "resolved",
    "resolve_next_release": "resolved_next_release",
    "ignore": "ignored",
    "reopen": "unresolved",
}


@dataclass
class StatusRequest:
    status: str
    ignore_until_events: int | None = None
    ignore_until: datetime | None = None


# "Ignore until N more events": more than a trillion is "forever"; the bound keeps the count and its
# baseline inside the warehouse's 64-bit column.
MAX_IGNORE_EVENTS = 10**12


def parse_ignore(kind: str, events: str, until: str) -> tuple[int | None, datetime | None]:
    """The ignore form's choice: forever, until N more events, or until a date (UTC)."""
    if kind == "events":
        # Length first: int() of thousands of digits is slow (and refused past 4,300).
        digits = events.strip()
        if not digits.isdigit() or len(digits) > 13 or not 1 <= int(digits) <= MAX_IGNORE_EVENTS:
            raise IllegalTransition(f"enter a whole number of events from 1 to {MAX_IGNORE_EVENTS:,}")
        return int(digits), None
    if kind == "until":
        try:
            when = datetime.fromisoformat(until.strip())
        except ValueError as exc:
            raise IllegalTransition("enter the date as YYYY-MM-DD or YYYY-MM-DDTHH:MM") from exc
        return None, when if when.tzinfo else when.replace(tzinfo=UTC)
    return None, None


def apply_status(
    client: Client, org_id: int, project_id: int, issue_id: int, request: StatusRequest, actor: str
) -> str | None:
    """Change one issue's status as ``actor`` (a user's e-mail, or ``api:<key id>``); ``None`` on success,
    else why it was refused (plain words)."""
    if issue_summary(client, org_id, project_id, issue_id) is None:
        return "no such issue in this project"
    try:
        change_status(
            client,
            org_id=org_id,
            project_id=project_id,
            issue_id=issue_id,
            status=request.status,
            actor=actor,
            ignore_until_events=request.ignore_until_events,
            ignore_until=request.ignore_until,
        )
    except IllegalTransition as exc:
        return str(exc)
    return None


def record_status_activity(
    session: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    status: str,
    *,
    actor: str,
    actor_user_id: int | None = None,
) -> None:
    """A status change in the organization's activity log (its history row is in the warehouse)."""
    record_activity(
        session,
        org_id,
        "issue.status_changed",
        "issue",
        None,  # issue ids are 52-bit: they go in the detail, the target column is 32-bit
        actor_user_id,
        {"issue_id": str(issue_id), "project_id": project_id, "status": status, "actor": actor},
    )
