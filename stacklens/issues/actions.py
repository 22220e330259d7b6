"""Status changes from the pages and the JSON API, through the issue workflow (which records the history)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

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


class _Scoped:
    """What apply_status needs from the caller: the resolved organization and project ids."""

    org_id: int
    project_id: int


def parse_ignore(kind: str, events: str, until: str) -> tuple[int | None, datetime | None]:
    """The ignore form's choice: forever, until N more events, or until a date (UTC)."""
    if kind == "events":
        if not events.strip().isdigit() or int(events) < 1:
            raise IllegalTransition("enter a whole number of events, 1 or more")
        return int(events), None
    if kind == "until":
        try:
            when = datetime.fromisoformat(until.strip())
        except ValueError as exc:
            raise IllegalTransition("enter the date as YYYY-MM-DD or YYYY-MM-DDTHH:MM") from exc
        return None, when if when.tzinfo else when.replace(tzinfo=UTC)
    return None, None


def apply_status(
    client: Client, scope: _Scoped | object, issue_id: int, request: StatusRequest, actor: str = ""
) -> str | None:
    """Change one issue's status; ``None`` on success, else why it was refused (plain words)."""
    org_id, project_id = scope.org_id, scope.project_id  # type: ignore[attr-defined]
    if issue_summary(org_id, project_id, issue_id) is None:
        return "no such issue in this project"
    if not actor:
        actor = scope.viewer.user.email  # type: ignore[attr-defined]
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
