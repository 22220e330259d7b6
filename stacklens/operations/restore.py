"""`stacklens restore --from DIR`: a backup back into an empty data directory (embedded installation).

The warehouse comes back through the engine's RESTORE (an incremental backup with its full base), the control
store and the Dagster files as they were copied, the secret from a sealed backup. Then every kept table's row
count and checksum is compared with the manifest's: a restore that does not give back the same rows fails,
naming the table. The caller migrates afterwards (`stacklens restore` does), so a backup of an older version
comes up to today's schema.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from stacklens.operations import sealing
from stacklens.operations.backup import (
    BackupError,
    Manifest,
    control_store_file,
    secret_fingerprint,
    table_figures,
)
from stacklens.operations.engine_backup import Destination, restore_statement, run_backup_statement
from stacklens.settings import SECRET_FILE_NAME, Settings
from stacklens.warehouse.client import own_client
from stacklens.warehouse.queries import run_query


@dataclass
class RestoreResult:
    manifest: Manifest
    tables_checked: int
    rows_checked: int
    warnings: list[str] = field(default_factory=list)


def _empty_target(settings: Settings) -> None:
    """Refuse a data directory that holds an installation: a restore never merges into live data."""
    problems = []
    control = control_store_file(settings)
    if control is None:
        raise BackupError(
            "the control store is PostgreSQL: restore it with pg_restore (docs/operations.md, scaled mode)"
        )
    if control.exists() and control.stat().st_size > 0:
        problems.append(str(control))
    client = own_client(settings.resolved_warehouse_url, "default")
    try:
        exists = run_query(client, "warehouse/database_exists", {"db": settings.warehouse_database})
        if exists and int(next(iter(exists[0].values()))):
            tables = run_query(client, "operations/data_tables", {"database": settings.warehouse_database})
            if tables:
                problems.append(f"warehouse database {settings.warehouse_database!r}")
    finally:
        client.close()
    if problems:
        raise BackupError(
            f"the data directory {settings.data_dir} is not empty ({', '.join(problems)}): restore into a new "
            "data directory (STACKLENS_DATA_DIR), then point the service at it"
        )


def _located_base(source: Path, manifest: Manifest) -> Path:
    assert manifest.base is not None
    recorded = Path(manifest.base["path"])
    for candidate in (recorded, source.parent / recorded.name):
        try:
            if Manifest.read(candidate).id == manifest.base["id"]:
                return candidate
        except BackupError:
            continue
    raise BackupError(
        f"{source} is incremental: its full backup {manifest.base['id']} is neither at {recorded} nor beside "
        f"it in {source.parent}"
    )


def _opened(source: Path, passphrase: str | None, scratch: Path, name: str) -> Path:
    """``source`` itself, or, when sealed, an opened copy of it in ``scratch``."""
    manifest = Manifest.read(source)
    if not manifest.sealed:
        return source
    if not passphrase:
        raise BackupError(f"{source} is sealed: give its passphrase with --passphrase-env VAR")
    target = scratch / name
    sealing.open_tree(source, passphrase, target)
    return target


def restore_backup(settings: Settings, source: Path, passphrase: str | None = None) -> RestoreResult:
    """Restore ``source`` into ``settings``' data directory, which must hold no installation yet."""
    source = source.resolve()
    manifest = Manifest.read(source)
    _empty_target(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    warnings: list[str] = []
    with tempfile.TemporaryDirectory(prefix="stacklens-restore-", dir=settings.data_dir) as scratch_name:
        scratch = Path(scratch_name)
        opened = _opened(source, passphrase, scratch, "backup")
        base = None
        if manifest.base is not None:
            base = _opened(_located_base(source, manifest), passphrase, scratch, "base")
        client = own_client(settings.resolved_warehouse_url, "default")
        try:
            run_backup_statement(
                client,
                restore_statement(
                    manifest.database,
                    settings.warehouse_database,
                    Destination("File", (str(opened / "warehouse"),)),
                    Destination("File", (str(base / "warehouse"),)) if base is not None else None,
                ),
            )
        finally:
            client.close()
        control = control_store_file(settings)
        assert control is not None  # _empty_target refused PostgreSQL
        if (opened / "control.db").exists():
            control.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(opened / "control.db", control)
            os.chmod(control, 0o600)
        for relative in manifest.dagster_files:
            target = settings.dagster_home / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(opened / "dagster" / relative, target)
        warnings += _restore_secret(settings, opened, manifest)
    rows = _verify(settings, manifest)
    kept = [t for t, v in manifest.tables.items() if v.get("kept")]
    return RestoreResult(manifest, len(kept), rows, warnings)


def _restore_secret(settings: Settings, opened: Path, manifest: Manifest) -> list[str]:
    """Put the sealed secret back, or check the one the new data directory will use."""
    path = settings.data_dir / SECRET_FILE_NAME
    if (opened / SECRET_FILE_NAME).exists():
        secret = (opened / SECRET_FILE_NAME).read_bytes().strip()
        if settings.secret_key is None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secret)
            return []
    if settings.secret_key is not None or path.exists():
        if secret_fingerprint(settings.secret()) != manifest.secret_fingerprint:
            return [
                "the server secret in use is not the backed-up installation's: stored keys, tokens and webhook "
                "secrets will not open; put the original secret in STACKLENS_SECRET_KEY or "
                f"{path} before serving"
            ]
        return []
    return [
        f"the backup holds no server secret: put the original installation's secret_key at {path} (0600) or "
        "in STACKLENS_SECRET_KEY before serving, or stored keys, tokens and webhook secrets will not open"
    ]


def _verify(settings: Settings, manifest: Manifest) -> int:
    kept = {t: v for t, v in manifest.tables.items() if v.get("kept")}
    client = own_client(settings.resolved_warehouse_url, settings.warehouse_database)
    try:
        figures = table_figures(client, settings.warehouse_database, sorted(kept))
    finally:
        client.close()
    for table, expected in kept.items():
        got = figures[table]
        if got.rows != expected["rows"] or got.checksum != expected["checksum"]:
            raise BackupError(
                f"restored table {table} differs from the backup's manifest ({got.rows} rows, checksum "
                f"{got.checksum}; the backup recorded {expected['rows']} rows, checksum {expected['checksum']})"
            )
    return sum(int(v["rows"]) for v in kept.values())
