"""`stacklens status --storage` as lines for people: sizes in binary units (KiB, MiB, GiB, as the metrics
layer writes bytes), the largest tables and projects first."""

from __future__ import annotations

from typing import Any

from stacklens.metrics.units import binary_size, number

MAX_TABLES = 15


def days_until_full_text(days: float | None) -> str:
    if days is None:
        return "no growth measured in the last 7 days"
    if days > 3650:
        return "more than 10 years at the last 7 days' rate"
    return f"{number(days, 1)} days at the last 7 days' rate"


def storage_lines(report: dict[str, Any]) -> list[str]:
    """The report of :meth:`stacklens.operations.storage.StorageReport.as_json` as aligned lines."""
    directory = report.get("directory_bytes")
    lines = [
        f"warehouse: {binary_size(report['warehouse_bytes'])} on disk in table parts (the tables below)"
        + (
            f"; its directory holds {binary_size(directory)} with the tables' metadata, the engine's own "
            "system logs and parts waiting to be merged away"
            if directory is not None
            else ""
        ),
        f"disk: {binary_size(report['free_bytes'])} free of {binary_size(report['total_bytes'])} "
        f"({report['disk_path']})",
        f"growth: {binary_size(report['bytes_per_day'])} per day; full in "
        f"{days_until_full_text(report['days_until_full'])}",
        f"oldest event kept: {report['oldest_event'] or 'none'}",
        "",
        f"{'table':<32} {'rows':>14} {'on disk':>12} {'parts':>6}",
    ]
    for table in report["tables"][:MAX_TABLES]:
        lines.append(
            f"{table['table']:<32} {number(table['rows'], 0):>14} {binary_size(table['bytes_on_disk']):>12} "
            f"{table['parts']:>6}"
        )
    hidden = len(report["tables"]) - MAX_TABLES
    if hidden > 0:
        lines.append(f"… and {hidden} smaller tables (--json lists them all)")
    lines += ["", f"{'project':<40} {'raw rows':>14} {'on disk (est.)':>15} {'oldest event':>26}"]
    for project in report["projects"]:
        lines.append(
            f"{project['name']:<40} {number(project['rows'], 0):>14} "
            f"{binary_size(project['bytes_estimated']):>15} {project['oldest'] or '–':>26}"
        )
    if not report["projects"]:
        lines.append("(no raw data yet)")
    return lines
