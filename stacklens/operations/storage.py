"""`stacklens status --storage` and the operators' page: where the disk goes and how long it lasts.

Bytes per table are the engine's (active parts on disk, compressed). Bytes per project are each project's
share of every raw table's rows times the table's bytes per row: the engine keeps no per-project byte
count, and rows of one table are alike enough in size for an operator's question ("who fills my disk?").
The growth rate is the raw rows received in the last 7 days, in bytes the same way, per day; days until
full is the warehouse disk's free space over it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.operations.raw_tables import COLUMNS, RAW_NAMES, RAW_TABLES
from stacklens.settings import Settings
from stacklens.warehouse.queries import identifier, run_query

GROWTH_DAYS = 7


@dataclass(frozen=True)
class TableSize:
    table: str
    rows: int
    bytes_on_disk: int
    bytes_uncompressed: int
    parts: int


@dataclass
class ProjectSize:
    project_id: int
    name: str
    rows: int = 0
    bytes_estimated: int = 0
    oldest: datetime | None = None


@dataclass
class StorageReport:
    tables: list[TableSize]
    projects: list[ProjectSize]
    oldest_event: datetime | None
    warehouse_bytes: int
    disk_path: str
    free_bytes: int
    total_bytes: int
    bytes_per_day: float
    days_until_full: float | None
    notes: list[str] = field(default_factory=list)
    # The embedded engine's whole directory (parts, table metadata, the engine's own logs and temporary or
    # detached parts); None for a ClickHouse server, whose directory is on another machine.
    directory_bytes: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "tables": [t.__dict__ for t in self.tables],
            "projects": [
                {**p.__dict__, "oldest": p.oldest.isoformat() if p.oldest else None} for p in self.projects
            ],
            "oldest_event": self.oldest_event.isoformat() if self.oldest_event else None,
            "warehouse_bytes": self.warehouse_bytes,
            "disk_path": self.disk_path,
            "free_bytes": self.free_bytes,
            "total_bytes": self.total_bytes,
            "bytes_per_day": round(self.bytes_per_day),
            "days_until_full": round(self.days_until_full, 1) if self.days_until_full is not None else None,
            "directory_bytes": self.directory_bytes,
        }


def _utc(value: datetime | None) -> datetime | None:
    if value is None or value.year < 1980:  # min() over no rows answers the epoch
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _oldest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def storage_report(client: Client, database: str, names: Mapping[int, str]) -> StorageReport:
    """Measure ``database`` on ``client``'s warehouse; ``names`` labels project ids (``org/project``)."""
    tables = [
        TableSize(
            str(r["table"]),
            int(r["rows"]),
            int(r["bytes_on_disk"]),
            int(r["bytes_uncompressed"]),
            int(r["parts"]),
        )
        for r in run_query(client, "operations/table_sizes", {"database": database})
    ]
    by_name = {t.table: t for t in tables}
    projects: dict[int, ProjectSize] = {}
    oldest_event: datetime | None = None
    per_day = 0.0
    for raw in RAW_TABLES:
        size = by_name.get(raw.name)
        if size is None or size.rows == 0:
            continue
        per_row = size.bytes_on_disk / size.rows
        rows = run_query(
            client,
            "operations/project_rows",
            {
                "table": identifier(raw.name, RAW_NAMES),
                "time": identifier(raw.time, COLUMNS),
                "received": identifier(raw.received, COLUMNS),
            },
        )
        for row in rows:
            pid = int(row["project_id"])
            project = projects.setdefault(pid, ProjectSize(pid, names.get(pid, f"project {pid} (deleted)")))
            project.rows += int(row["rows"])
            project.bytes_estimated += round(int(row["rows"]) * per_row)
            oldest = _utc(row["oldest"])
            if raw.name == "events":
                project.oldest = _oldest(project.oldest, oldest)
                oldest_event = _oldest(oldest_event, oldest)
            per_day += int(row["recent_rows"]) * per_row / GROWTH_DAYS
    disks = run_query(client, "operations/disks")
    disk = next((d for d in disks if d["name"] == "default"), disks[0] if disks else None)
    free = int(disk["free_space"]) if disk else 0
    total = int(disk["total_space"]) if disk else 0
    return StorageReport(
        tables=tables,
        projects=sorted(projects.values(), key=lambda p: (-p.bytes_estimated, p.name)),
        oldest_event=oldest_event,
        warehouse_bytes=sum(t.bytes_on_disk for t in tables),
        disk_path=str(disk["path"]) if disk else "",
        free_bytes=free,
        total_bytes=total,
        bytes_per_day=per_day,
        days_until_full=(free / per_day) if per_day > 0 else None,
    )


def measure_storage(settings: Settings) -> StorageReport:
    """:func:`storage_report` of ``settings``' installation, projects named ``org/project`` from the
    control store (in the process that owns the warehouse)."""
    from stacklens.control.db import session_scope
    from stacklens.control.project_retention import retentions
    from stacklens.warehouse.client import get_warehouse

    with session_scope(settings) as session:
        names = {p.project_id: p.name for p in retentions(session)}
    report = storage_report(get_warehouse(settings), settings.warehouse_database, names)
    url = settings.resolved_warehouse_url
    if url.startswith("chdb://"):
        report.directory_bytes = directory_bytes(Path(url.removeprefix("chdb://")))
    return report


def directory_bytes(path: Path) -> int:
    """Bytes the files under ``path`` take on disk (allocated blocks, as ``du`` counts them)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:  # removed by a merge while we walk
                continue
    return total


def outcome_totals(client: Client) -> list[tuple[str, int]]:
    """Items of the last 24 hours by outcome (accepted, rate_limited, …), every organization together."""
    return [(str(r["outcome"]), int(r["quantity"])) for r in run_query(client, "operations/outcome_totals")]
