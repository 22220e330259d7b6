"""What a log record's trace links to: the trace's transaction (its waterfall) and the errors in it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import run_query


@dataclass(frozen=True)
class TraceError:
    event_id: str
    issue_id: int
    title: str
    timestamp: datetime


def trace_transactions(
    client: Client, org_id: int, project_id: int, trace_ids: list[str], since: datetime, until: datetime
) -> dict[str, str]:
    """Per trace id, the event id of its earliest transaction near [since, until) (traces without one are
    absent): one read for a whole page of records."""
    ids = sorted({t for t in trace_ids if t})
    if not ids:
        return {}
    rows = run_query(
        client,
        "logs/trace_transactions",
        {
            "org_id": org_id,
            "project_id": project_id,
            "trace_ids": ids,
            "since": since,
            "until": until,
        },
    )
    return {row["trace_id"]: row["event_id"] for row in rows}


def trace_errors(
    client: Client, org_id: int, project_id: int, trace_id: str, around: datetime
) -> list[TraceError]:
    """The error events of ``trace_id`` within a day of ``around``, newest first (at most 20)."""
    rows = run_query(
        client,
        "logs/trace_issues",
        {"org_id": org_id, "project_id": project_id, "trace_id": trace_id, "around": around},
    )
    return [
        TraceError(
            row["event_id"],
            int(row["issue_id"]),
            row["title"],
            row["timestamp"].replace(tzinfo=UTC) if row["timestamp"].tzinfo is None else row["timestamp"],
        )
        for row in rows
    ]
