"""Event caps: at most N error events kept per issue and/or per project, the oldest removed first.

Bugsink and GlitchTip keep such caps so that one noisy issue cannot fill the disk. Here they are applied by
the retention run (stacklens/operations/retention.py), after the days, to the ``events`` table only:
transactions, spans and the rest follow the days. What a cap removes is the stored event (its payload,
stack trace, tags); what happened stays counted, because the issue counters, daily counts and release error
counts are insert-time tables fed by materialized views, which a delete on ``events`` does not touch. So
once capped, an issue says "1,204 events" and its event browser pages through the newest N of them
(docs/operations.md)."""

from __future__ import annotations

from dataclasses import dataclass

from clickhouse_connect.driver.client import Client

from stacklens.control.project_retention import ProjectRetention
from stacklens.warehouse.queries import load_query, run_query


@dataclass(frozen=True)
class CapOutcome:
    project: str
    per_issue: int | None
    per_project: int | None
    rows_deleted: int  # events over the caps when the run started (each removed by its mutation)


def apply_event_caps(client: Client, project: ProjectRetention) -> CapOutcome | None:
    """Remove ``project``'s error events beyond its caps (per issue first, then the project's): None when
    it has no cap. Each cap looks before it deletes, as a mutation rewrites every part it visits even for
    no rows."""
    caps = ((1, project.max_events_per_issue), (0, project.max_events_per_project))
    if all(cap is None for _, cap in caps):
        return None
    statement = load_query("operations/delete_over_cap")
    deleted = 0
    for per_issue, cap in caps:
        if cap is None:
            continue
        parameters = {"project_id": project.project_id, "per_issue": per_issue, "cap": cap}
        over = int(run_query(client, "operations/over_cap", parameters)[0]["rows"])
        if over:
            client.command(statement, parameters=parameters, settings={"mutations_sync": 2})
            deleted += over
    return CapOutcome(project.name, project.max_events_per_issue, project.max_events_per_project, deleted)
