"""Which issue each event a feedback speaks of belongs to (the warehouse's events, read by id).

Resolved when read, not when the feedback arrives: a user report often arrives before its event has landed,
and an issue merged since is then still found."""

from __future__ import annotations

from collections.abc import Collection

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import run_query

_CHUNK = 1000


def issues_of_events(
    client: Client, org_id: int, project_id: int, event_ids: Collection[str]
) -> dict[str, int]:
    """Event id (32 hex digits) → issue id, for those of ``event_ids`` stored in the project."""
    ids = sorted({e for e in event_ids if e})
    found: dict[str, int] = {}
    for start in range(0, len(ids), _CHUNK):
        rows = run_query(
            client,
            "events/issues_of_events",
            {"org_id": org_id, "project_id": project_id, "event_ids": ids[start : start + _CHUNK]},
        )
        found.update({str(r["event_id"]).replace("-", ""): int(r["issue_id"]) for r in rows})
    return found
