"""`stacklens backup` of an embedded installation: one directory holding everything the data directory holds.

Layout of ``DIR``::

    warehouse/         the engine's BACKUP of the database (every table, marts included: a restore needs no
                       pipeline run to show its pages); incremental against a full backup when asked
    control.db         the control store (SQLite's online backup API: a consistent copy of a live file)
    dagster/…/*.db     the Dagster instance's SQLite files (schedule state, runs), same way
    secret_key.sealed  the server secret, only in a sealed backup (stacklens.operations.sealing)
    manifest.json      written last: what, when, the cut-off, per-table row counts and checksums, every
                       file of the backup; signed with the installation's secret
                       (stacklens.operations.backup_contents)

Where it goes and what a failure leaves: stacklens.operations.backup_target (a new or empty directory, never
the data directory; a refused or failed backup removes only what it made). Directories 0700, files 0600.

The cut-off: the front door lands every row answered before the backup starts, then holds its drains while the
engine takes the database (requests are still answered; their rows wait in the durable spool and land after).
An event answered 200 is therefore in the backup, or answered after the cut-off and not in it — never half
(its spans, transaction and batch record land in one drain). Spooled rows are not copied into the backup:
they were answered after its cut-off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.engine import make_url

from stacklens import __version__
from stacklens.ingest.front_door import drains_held
from stacklens.metrics.units import binary_size
from stacklens.operations.backup_contents import SIGNED_FORMAT, inventory, open_no_follow, signature
from stacklens.operations.backup_target import (
    BackupError,
    ClaimedTarget,
    check_target,
    claim_target,
    make_private,
)
from stacklens.operations.engine_backup import (
    Destination,
    backup_statement,
    run_backup_statement,
)
from stacklens.outcomes.tally import writes_held as outcome_writes_held
from stacklens.settings import Settings
from stacklens.warehouse.client import own_client
from stacklens.warehouse.queries import identifier, run_query

MANIFEST = "manifest.json"
FORMAT = SIGNED_FORMAT
# Format 1: a backup of a version that did not sign its manifest (restored only when the operator says so).
READABLE_FORMATS = (1, SIGNED_FORMAT)
NOT_LISTED = frozenset({MANIFEST, MANIFEST + ".tmp"})
# The tables ingest writes (the front door's, and the outcome counts): nothing can rebuild them, and no other
# writer touches them, so their checksums are taken under the cut-off and a restore proves it gave back
# exactly these rows. Every other table is backed up too (marts, issue workflow state, source maps); the
# pipelines and people's actions may write those while the backup runs, so their row counts are figures, not a
# check.
KEPT_TABLES = (
    "events",
    "transactions",
    "spans",
    "sessions",
    "logs",
    "replays",
    "replay_segments",
    "outcomes",
    "ingest_batches",
)


__all__ = ["BackupError", "Manifest", "run_backup"]


@dataclass(frozen=True)
class TableFigures:
    rows: int
    checksum: str


@dataclass
class Manifest:
    """What ``manifest.json`` holds."""

    id: str
    created_at: str
    cutoff: str
    stacklens_version: str
    database: str
    kind: str  # full | incremental
    base: dict[str, str] | None
    tables: dict[str, dict[str, Any]]
    migrations: list[str]
    control_store: str  # control.db | absent
    dagster_files: list[str]
    secret: str  # sealed | not-included
    secret_fingerprint: str
    sealed: bool = False
    rows_waiting_at_cutoff: int = 0
    held_ms: int = 0  # how long the front door held its drains (ingest answered, rows landed after)
    warehouse: dict[str, Any] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # every file but the manifest
    format: int = FORMAT
    signature: str = ""  # HMAC of the rest under the installation's secret (backup_contents)

    def as_json(self) -> dict[str, Any]:
        # Through JSON and back: the signed form is exactly what a reader of the file gets.
        return dict(json.loads(json.dumps(self.__dict__)))

    @property
    def signed(self) -> bool:
        return self.format >= SIGNED_FORMAT

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST
        if not os.path.lexists(path):
            raise BackupError(
                f"{directory} holds no {MANIFEST}: not a StackLens backup, or one that did not finish"
            )
        try:
            with os.fdopen(open_no_follow(path), "rb") as handle:
                data = json.loads(handle.read())
        except ValueError as exc:
            raise BackupError(f"{path} is not readable JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") not in READABLE_FORMATS:
            raise BackupError(f"{path} is of a backup format this version does not read")
        if data["format"] < SIGNED_FORMAT and ("signature" in data or "files" in data):
            raise BackupError(f"{path} mixes an unsigned format with a signed one's fields: changed by hand")
        try:
            return cls(**data)
        except TypeError:
            raise BackupError(f"{path} holds fields a StackLens backup's manifest does not have") from None

    def write(self, directory: Path, secret: bytes) -> None:
        """Sign (the installation's ``secret``) and write, 0600, replacing the file at once."""
        self.format = FORMAT
        self.signature = signature(self.as_json(), secret)
        tmp = directory / (MANIFEST + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(self.as_json(), indent=2, sort_keys=True))
        os.replace(tmp, directory / MANIFEST)


def secret_fingerprint(secret: bytes) -> str:
    """A short, one-way mark of the server secret: a restore can tell whether the secret it is given is the
    one the control store's encrypted values need, without the backup holding the secret."""
    return hashlib.sha256(b"stacklens-backup-secret-check\0" + secret).hexdigest()[:16]


def table_figures(client: Client, database: str, tables: list[str]) -> dict[str, TableFigures]:
    figures = {}
    for table in tables:
        row = run_query(
            client,
            "operations/table_checksum",
            {"database": database, "table": identifier(table, tables)},
        )[0]
        figures[table] = TableFigures(int(row["rows"]), str(row["checksum"]))
    return figures


def data_tables(client: Client, database: str) -> list[str]:
    return [str(r["name"]) for r in run_query(client, "operations/data_tables", {"database": database})]


def base_manifest(base: Path | None, database: str) -> Manifest | None:
    if base is None:
        return None
    manifest = Manifest.read(base)
    if manifest.kind != "full":
        raise BackupError(
            f"{base} is an incremental backup; --incremental-from names a full one (each incremental backup "
            "holds what changed since its full backup)"
        )
    if manifest.database != database:
        raise BackupError(f"{base} is a backup of database {manifest.database!r}, not {database!r}")
    return manifest


def sqlite_copy(source: Path, target: Path) -> None:
    """A consistent copy of a live SQLite file (the online backup API; writers wait only page by page)."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    os.chmod(target, 0o600)


def control_store_file(settings: Settings) -> Path | None:
    """The SQLite file of the control store, ``None`` when it is PostgreSQL (scaled: `pg_dump`)."""
    url = make_url(settings.resolved_database_url)
    if not url.drivername.startswith("sqlite") or not url.database:
        return None
    return Path(url.database)


def dagster_files(settings: Settings) -> list[Path]:
    """The Dagster instance's SQLite files (schedules, runs, event logs) under its home."""
    home = settings.dagster_home
    return sorted(p for p in home.rglob("*.db") if p.is_file()) if home.exists() else []


def create_backup(
    settings: Settings, claimed: ClaimedTarget, base: Path | None = None, passphrase: str | None = None
) -> Manifest:
    """Back up ``settings``' embedded installation into the ``claimed`` directory, online, in this process —
    the one that owns the warehouse; sealed with ``passphrase`` when given (the secret inside). Each name it
    writes is recorded in ``claimed`` first, so a failure removes exactly what it made."""
    target = claimed.path
    database = settings.warehouse_database
    base = base.resolve() if base is not None else None
    base_info = base_manifest(base, database)
    started = datetime.now(UTC)
    client = own_client(settings.resolved_warehouse_url, database)
    try:
        tables = data_tables(client, database)
        kept = [t for t in KEPT_TABLES if t in tables]
        with drains_held(settings) as waiting, outcome_writes_held(settings):
            cutoff = datetime.now(UTC)
            held = time.monotonic()
            figures = run_backup_statement(
                client,
                backup_statement(
                    database,
                    Destination("File", (str(claimed.entry("warehouse")),)),
                    Destination("File", (str(base / "warehouse"),)) if base is not None else None,
                ),
            )
            kept_figures = table_figures(client, database, kept)
            held_ms = int((time.monotonic() - held) * 1000)
        sizes = run_query(client, "operations/table_sizes", {"database": database})
        counts = {str(r["table"]): int(r["rows"]) for r in sizes if r["table"] not in kept_figures}
        migrations = [str(r["name"]) for r in run_query(client, "warehouse/applied_migrations")]
    finally:
        client.close()
    control = control_store_file(settings)
    if control is not None and control.exists():
        sqlite_copy(control, claimed.entry("control.db"))
    copied = []
    for path in dagster_files(settings):
        relative = path.relative_to(settings.dagster_home)
        sqlite_copy(path, claimed.entry("dagster") / relative)
        copied.append(relative.as_posix())
    secret = settings.secret()
    manifest = Manifest(
        id=f"{started:%Y%m%dT%H%M%SZ}-{os.urandom(3).hex()}",
        created_at=started.isoformat(),
        cutoff=cutoff.isoformat(),
        stacklens_version=__version__,
        database=database,
        kind="incremental" if base is not None else "full",
        base={"id": base_info.id, "path": str(base)} if base_info is not None and base is not None else None,
        tables={
            **{t: {"rows": f.rows, "checksum": f.checksum, "kept": True} for t, f in kept_figures.items()},
            **{t: {"rows": n, "kept": False} for t, n in counts.items()},
        },
        migrations=migrations,
        control_store="control.db" if (target / "control.db").exists() else "absent",
        dagster_files=copied,
        secret="not-included",
        secret_fingerprint=secret_fingerprint(secret),
        rows_waiting_at_cutoff=waiting,
        held_ms=held_ms,
        warehouse=figures,
    )
    if passphrase:
        _seal(claimed, manifest, passphrase, secret)
    make_private(target)
    manifest.files = inventory(target, NOT_LISTED)
    claimed.entry(MANIFEST)
    claimed.entry(MANIFEST + ".tmp")
    manifest.write(target, secret)
    return manifest


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _seal(claimed: ClaimedTarget, manifest: Manifest, passphrase: str, secret: bytes) -> None:
    """Encrypt every file of the backup with ``passphrase``, the server secret with them: a sealed backup is
    complete on its own (and worthless without the passphrase)."""
    from stacklens.operations import sealing
    from stacklens.settings import SECRET_FILE_NAME

    fd = os.open(claimed.entry(SECRET_FILE_NAME), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(secret)
    sealing.seal_tree(claimed.path, passphrase)
    manifest.sealed = True
    manifest.secret = "sealed"


def _recorded(settings: Settings, maintenance: Any) -> dict[str, Any]:
    """The maintenance log's row of this backup; a control store of an older version (no log yet, before
    `stacklens migrate`) gets none, and the backup stands."""
    from sqlalchemy.exc import SQLAlchemyError

    from stacklens.control.db import session_scope

    try:
        with session_scope(settings) as session:
            return dict(maintenance.record(session).as_json())
    except SQLAlchemyError:
        return {
            "kind": "backup",
            "outcome": maintenance.outcome,
            "duration_ms": maintenance.duration_ms,
            "summary": maintenance.summary + " (not in the maintenance log: the control store predates it)",
            "detail": maintenance.detail,
        }


def run_backup(
    settings: Settings, target: Path, base: Path | None = None, passphrase: str | None = None
) -> tuple[Manifest, dict[str, Any]]:
    """:func:`create_backup` (sealed with ``passphrase`` when given), recorded in the maintenance log with its
    outcome and duration whatever happens; the manifest and the log's row."""
    from stacklens.control.maintenance_log import Maintenance

    maintenance = Maintenance("backup")
    manifest = None
    claimed: ClaimedTarget | None = None
    try:
        with maintenance:
            maintenance.summary = f"backup to {target}"
            if not settings.embedded_warehouse:
                raise BackupError(
                    "this installation's warehouse is a ClickHouse server: `stacklens backup` drives its BACKUP "
                    "and pg_dump (stacklens.operations.scaled), see docs/operations.md"
                )
            check_target(settings, target)
            base_manifest(base.resolve() if base is not None else None, settings.warehouse_database)
            # Every check above changes nothing; from here on, what this run makes is recorded, and only
            # that is removed when it fails.
            claimed = claim_target(settings, target)
            manifest = create_backup(settings, claimed, base, passphrase)
            size = directory_bytes(claimed.path)
            kept_rows = sum(int(v["rows"]) for v in manifest.tables.values() if v.get("kept"))
            maintenance.summary = (
                f"{manifest.kind} backup {manifest.id} to {target}: {kept_rows:,} raw rows, {binary_size(size)}"
                f"{', sealed' if manifest.sealed else ''}"
            )
            maintenance.detail = {
                "id": manifest.id,
                "path": str(claimed.path),
                "kind": manifest.kind,
                "bytes": size,
                "rows": kept_rows,
                "cutoff": manifest.cutoff,
                "sealed": manifest.sealed,
            }
    except BaseException:
        if claimed is not None:
            claimed.discard()
        raise
    finally:
        row = _recorded(settings, maintenance)
    assert manifest is not None
    return manifest, row
