"""The retention run: each project's raw rows older than its own retention deleted, and the disk freed.

The engine's TTL keeps the installation's retention (``STACKLENS_RETENTION_DAYS``) on every table; a project
that keeps fewer days has its older rows deleted here, table by table, by a mutation run to its end: the
parts holding such rows are rewritten without them and the old parts removed, so the disk is freed at once
(the embedded engine keeps no outdated parts, old_parts_lifetime 0; a server frees them after its own
old_parts_lifetime, 8 minutes by default). The marts (hourly and daily aggregates, small) follow the
installation's TTL. ``stacklens retention run`` calls :func:`apply_retention`; run it daily (a cron job or a
systemd timer, docs/operations.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.control.project_retention import ProjectRetention
from stacklens.metrics.units import binary_size
from stacklens.operations.event_caps import apply_event_caps
from stacklens.operations.raw_tables import COLUMNS, RAW_NAMES, RAW_TABLES
from stacklens.settings import Settings
from stacklens.warehouse.queries import identifier, load_query, run_query


@dataclass
class RetentionOutcome:
    projects: list[dict[str, Any]] = field(default_factory=list)
    caps: list[dict[str, Any]] = field(default_factory=list)
    rows_deleted: int = 0
    bytes_before: int = 0
    bytes_after: int = 0

    @property
    def bytes_freed(self) -> int:
        return max(0, self.bytes_before - self.bytes_after)

    def as_json(self) -> dict[str, Any]:
        return {
            "projects": self.projects,
            "caps": self.caps,
            "rows_deleted": self.rows_deleted,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "bytes_freed": self.bytes_freed,
        }


def _raw_bytes_and_rows(client: Client, database: str) -> tuple[int, dict[str, int]]:
    sizes = run_query(client, "operations/table_sizes", {"database": database})
    return (
        sum(int(r["bytes_on_disk"]) for r in sizes),
        {str(r["table"]): int(r["rows"]) for r in sizes if r["table"] in RAW_NAMES},
    )


def run_retention(
    client: Client,
    database: str,
    projects: list[ProjectRetention],
    log_retention_days: int,
    now: datetime | None = None,
    wait_seconds: float = 30.0,
) -> RetentionOutcome:
    """Delete, for each of ``projects`` with days of its own, its raw rows older than them (logs keep at most
    ``log_retention_days``, the logs' own setting, whichever is fewer); then, for each with event caps, its
    error events beyond them (stacklens/operations/event_caps.py)."""
    now = now or datetime.now(UTC)
    outcome = RetentionOutcome()
    outcome.bytes_before, rows_before = _raw_bytes_and_rows(client, database)
    statement = load_query("operations/delete_before")
    mutated = False
    for project in projects:
        if project.days is None:
            continue
        for raw in RAW_TABLES:
            if raw.name not in rows_before:
                continue
            days = min(project.days, log_retention_days) if raw.name == "logs" else project.days
            parameters = {
                "table": identifier(raw.name, RAW_NAMES),
                "time": identifier(raw.time, COLUMNS),
                "project_id": project.project_id,
                "before": (now - timedelta(days=days)).replace(tzinfo=None),
            }
            if not int(run_query(client, "operations/count_before", parameters)[0]["rows"]):
                continue
            client.command(statement, parameters=parameters, settings={"mutations_sync": 2})
            mutated = True
        outcome.projects.append({"project": project.name, "days": project.days})
    for project in projects:
        capped = apply_event_caps(client, project)
        if capped is None:
            continue
        mutated = mutated or capped.rows_deleted > 0
        outcome.caps.append(
            {
                "project": capped.project,
                "max_events_per_issue": capped.per_issue,
                "max_events_per_project": capped.per_project,
                "events_deleted": capped.rows_deleted,
            }
        )
    if mutated:
        _wait_for_cleanup(client, database, wait_seconds)
    outcome.bytes_after, rows_after = _raw_bytes_and_rows(client, database)
    outcome.rows_deleted = sum(rows_before.values()) - sum(rows_after.values())
    return outcome


def _wait_for_cleanup(client: Client, database: str, wait_seconds: float) -> None:
    """Wait (up to ``wait_seconds``) until the parts the run replaced are off the disk (migration 0210 has the
    tables' cleanup look every second); on a server they stay its old_parts_lifetime, and the run ends
    first."""
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        row = run_query(
            client, "operations/replaced_parts", {"database": database, "tables": list(RAW_NAMES)}
        )[0]
        if int(row["parts"]) == 0:
            return
        time.sleep(0.5)


def apply_retention(
    settings: Settings, trigger: str = "manual", now: datetime | None = None
) -> tuple[RetentionOutcome, dict[str, Any]]:
    """One retention run over every project of ``settings``' installation (in the process that owns the
    warehouse), recorded in the maintenance log with its outcome, duration and ``trigger`` (``manual``:
    `stacklens retention run`; ``scheduled``: the server's daily run); the outcome and the log's row."""
    from stacklens.control.db import session_scope
    from stacklens.control.maintenance_log import Maintenance
    from stacklens.control.project_retention import retentions
    from stacklens.feedback.retention import remove_expired
    from stacklens.warehouse.client import get_warehouse

    maintenance = Maintenance("retention", started_at=now)
    outcome = RetentionOutcome()
    try:
        with maintenance:
            with session_scope(settings) as session:
                projects = retentions(session)
            outcome = run_retention(
                get_warehouse(settings),
                settings.warehouse_database,
                projects,
                settings.log_retention_days,
                now=now,
                wait_seconds=30.0 if settings.embedded_warehouse else 0.0,
            )
            with session_scope(settings) as session:  # their files and rows leave with their events
                removed = remove_expired(
                    settings, session, {p.project_id: p.days for p in projects}, now or datetime.now(UTC)
                )
            own = [p for p in projects if p.days is not None]
            maintenance.summary = (
                f"{trigger} retention run over {len(own)} project(s) with days of their own"
                f"{f' and {len(outcome.caps)} with event caps' if outcome.caps else ''}: "
                f"{outcome.rows_deleted:,} rows deleted, {binary_size(outcome.bytes_freed)} freed"
            )
            maintenance.detail = {**outcome.as_json(), **removed.as_json(), "trigger": trigger}
    finally:
        with session_scope(settings) as session:
            row = maintenance.record(session).as_json()
    return outcome, row
