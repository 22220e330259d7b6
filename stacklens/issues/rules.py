"""System transitions: regression of resolved issues and the end of an ignore.

The ``issue_list`` view already shows the derived status the moment an event lands; this writes it down
(current state plus a history row by the ``system`` actor) so the history tells what happened and when. The
``issues`` asset runs it on every tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.issues.workflow import (
    IGNORED,
    REGRESSED,
    SYSTEM_ACTOR,
    UNRESOLVED,
    IssueState,
    current_states,
    write_state,
)
from stacklens.warehouse.queries import load_query


@dataclass(frozen=True)
class SystemTransition:
    project_id: int
    issue_id: int
    from_status: str
    to_status: str
    reason: str


def _reason(stored: str, derived: str, state: IssueState, last_release: str) -> str:
    if derived == REGRESSED and stored == "resolved_next_release":
        return f"new event in release {last_release!r} after it was resolved in the next release"
    if derived == REGRESSED:
        return "new event after it was resolved"
    if stored == IGNORED and state.ignore_until_events:
        return f"{state.ignore_until_events} more events while ignored"
    return "ignore period ended"


def apply_system_transitions(client: Client, project_ids: list[int] | None = None) -> list[SystemTransition]:
    """Write every pending derived change (regressed / ignore ended); return what changed."""
    if project_ids is None:
        project_ids = [
            int(row[0]) for row in client.query(load_query("issues/projects_with_held_states")).result_rows
        ]
    done: list[SystemTransition] = []
    for project_id in project_ids:
        rows = client.query(
            load_query("issues/pending_transitions"),
            parameters={"p": int(project_id)},
        ).result_rows
        if not rows:
            continue
        states = current_states(client, project_id, [int(r[0]) for r in rows])
        now = datetime.now(UTC)
        for issue_id, stored, derived, last_release in rows:
            state = states.get(int(issue_id))
            if state is None or state.status != stored:
                continue  # changed by someone in between; the next tick looks again
            new = IssueState(
                org_id=state.org_id,
                project_id=state.project_id,
                issue_id=state.issue_id,
                status=str(derived),
                changed_at=now,
                changed_by=SYSTEM_ACTOR,
            )
            reason = _reason(str(stored), str(derived), state, str(last_release))
            write_state(client, state, new, reason=reason, release=str(last_release))
            done.append(SystemTransition(project_id, int(issue_id), str(stored), str(derived), reason))
    return done


__all__ = ["UNRESOLVED", "SystemTransition", "apply_system_transitions"]
