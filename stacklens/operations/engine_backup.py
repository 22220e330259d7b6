"""The warehouse engine's own ``BACKUP`` and ``RESTORE`` of one database, embedded (``File``) or on a server
(``Disk`` / ``S3``).

The engine takes no query parameters in these statements, so they are composed here: the database name is
the settings' (``^[A-Za-z_][A-Za-z0-9_]{0,62}$``, checked again) and every path or URL is written as a string
literal with its backslashes and quotes escaped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import run_query

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
ENGINES = frozenset({"File", "Disk", "S3"})


class EngineBackupError(RuntimeError):
    """The engine refused or failed a backup or a restore; the message is the engine's first line."""


def literal(value: str) -> str:
    """``value`` as a ClickHouse string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def database_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a database name")
    return name


@dataclass(frozen=True)
class Destination:
    """Where the engine writes a backup: ``File('<path>')`` (the embedded engine's file system),
    ``Disk('<disk>', '<name>')`` or ``S3('<url>')`` (a server's disk or bucket; credentials in the server's
    configuration)."""

    engine: str  # File | Disk | S3
    args: tuple[str, ...]

    def sql(self) -> str:
        # A restore reads the engine's name from a backup's manifest: only the three are written into SQL.
        if self.engine not in ENGINES:
            raise ValueError(f"{self.engine!r} is not a backup destination (File, Disk or S3)")
        return f"{self.engine}({', '.join(literal(str(a)) for a in self.args)})"


def backup_statement(
    database: str, to: Destination, base: Destination | None = None, on_cluster: str = ""
) -> str:
    """``BACKUP DATABASE … TO …`` (incremental against ``base`` when given)."""
    settings = f" SETTINGS base_backup = {base.sql()}" if base is not None else ""
    return f"BACKUP DATABASE {database_name(database)}{on_cluster} TO {to.sql()}{settings}"


def restore_statement(
    source_database: str,
    database: str,
    source: Destination,
    base: Destination | None = None,
    on_cluster: str = "",
) -> str:
    """``RESTORE DATABASE <as backed up> AS <database> FROM …`` (with the base of an incremental backup)."""
    settings = f" SETTINGS base_backup = {base.sql()}" if base is not None else ""
    rename = (
        f" AS {database_name(database)}" if database_name(database) != database_name(source_database) else ""
    )
    # The backed-up name comes from the backup's manifest: checked as the settings' name is.
    return (
        f"RESTORE DATABASE {database_name(source_database)}{rename}{on_cluster} FROM {source.sql()}{settings}"
    )


def run_backup_statement(client: Client, statement: str) -> dict[str, Any]:
    """Run a BACKUP or RESTORE to its end; the engine's figures of it (``system.backups``)."""
    try:
        result = client.query(statement)
    except Exception as exc:
        raise EngineBackupError(str(exc).strip().splitlines()[0][:400]) from exc
    backup_id = str(result.result_rows[0][0]) if result.result_rows else ""
    rows = run_query(client, "operations/backup_status", {"id": backup_id}) if backup_id else []
    if not rows:
        return {"id": backup_id}
    row = rows[0]
    if str(row["status"]) not in ("BACKUP_CREATED", "RESTORED"):
        raise EngineBackupError(f"the engine's {row['status']}: {str(row['error']).splitlines()[0][:400]}")
    return {
        "id": backup_id,
        "files": int(row["num_files"]),
        "bytes": int(row["total_size"]),
        "uncompressed_bytes": int(row["uncompressed_size"]),
    }
