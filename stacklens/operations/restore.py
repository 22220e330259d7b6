"""`stacklens restore --from DIR`: a backup back into an empty data directory (embedded installation).

The warehouse comes back through the engine's RESTORE (an incremental backup with its full base), the control
store and the Dagster files as they were copied, the secret from a sealed backup. Then every kept table's row
count and checksum is compared with the manifest's: a restore that does not give back the same rows fails,
naming the table. The caller migrates afterwards (`stacklens restore` does), so a backup of an older version
comes up to today's schema.

Before any of it, the backup is checked (stacklens.operations.backup_contents): the manifest's signature under
the installation's secret (a plain backup: the secret at hand; a sealed one: the secret it carries, opened
with the passphrase), no symbolic link anywhere in it, every listed file there as recorded, every name a plain
relative one. Only listed files are read; what a restore writes goes only into the data directory.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from stacklens.operations import sealing
from stacklens.operations.backup import (
    NOT_LISTED,
    BackupError,
    Manifest,
    control_store_file,
    secret_fingerprint,
    table_figures,
)
from stacklens.operations.backup_contents import (
    check_engine_index,
    check_tree,
    copy_no_follow,
    plain_name,
    signature_holds,
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
    recorded = Path(str(manifest.base.get("path", "")))
    beside = source.parent / plain_name(recorded.name).as_posix()
    for candidate in (recorded, beside):
        try:
            if Manifest.read(candidate).id == manifest.base["id"]:
                return candidate
        except BackupError:
            continue
    raise BackupError(
        f"{source} is incremental: its full backup {manifest.base['id']} is neither at {recorded} nor beside "
        f"it in {source.parent}"
    )


def _signing_secret(settings: Settings, source: Path, manifest: Manifest, passphrase: str | None) -> bytes:
    """The secret the backup's manifest was signed with: the sealed one it carries (opened with the
    passphrase), or, plain, the one at hand — never a new one generated here."""
    if manifest.sealed:
        if not passphrase:
            raise BackupError(f"{source} is sealed: give its passphrase with --passphrase-env VAR")
        sealed = source / (SECRET_FILE_NAME + sealing.SUFFIX)
        with tempfile.TemporaryDirectory(prefix="stacklens-secret-") as scratch:
            opened = Path(scratch) / SECRET_FILE_NAME
            check_tree(source, None, NOT_LISTED)  # no link anywhere, the sealed secret's one included
            if not sealed.is_file():
                raise BackupError(f"{source} is sealed but holds no sealed secret: not a complete backup")
            sealing.open_file(sealed, passphrase, opened)
            return opened.read_bytes().strip()
    if settings.secret_key is None and not (settings.data_dir / SECRET_FILE_NAME).exists():
        raise BackupError(
            f"{source} is not sealed: its manifest is signed with the backed-up installation's server secret, "
            f"which a restore needs first (the restored keys and tokens need it too) — put it in "
            f"STACKLENS_SECRET_KEY or at {settings.data_dir / SECRET_FILE_NAME} (0600), then restore"
        )
    return settings.secret()


def _checked(
    settings: Settings, source: Path, manifest: Manifest, secret: bytes, allow_unsigned: bool
) -> list[str]:
    """Refuse a backup StackLens did not make as it is (the module's doc); warnings of what is not read."""
    if not manifest.signed:
        if not allow_unsigned:
            raise BackupError(
                f"{source} was made by an earlier StackLens: its manifest is not signed, so nothing proves it "
                "was not changed. Restore it with --allow-unsigned only if it was kept where nobody else writes "
                "(its file names and links are checked all the same)"
            )
    elif not signature_holds(manifest.as_json(), secret):
        if secret_fingerprint(secret) != manifest.secret_fingerprint:
            raise BackupError(
                f"{source}: the server secret at hand is not the one of the installation that made this backup, "
                "so its manifest's signature cannot be checked — put the original secret in "
                "STACKLENS_SECRET_KEY or <data_dir>/secret_key, then restore"
            )
        raise BackupError(
            f"{source}/manifest.json was changed after the backup was made (its signature does not match): "
            "refused, nothing was restored"
        )
    for relative in manifest.dagster_files:
        plain_name(relative)
    unlisted = check_tree(source, manifest.files if manifest.signed else None, NOT_LISTED)
    index = source / "warehouse" / ".backup"
    if os.path.lexists(index):
        check_engine_index(index)
    return [f"{source}: {name} is not part of the backup; it was not read" for name in unlisted]


def _opened(source: Path, manifest: Manifest, passphrase: str | None, scratch: Path, name: str) -> Path:
    """``source`` itself, or, when sealed, an opened copy of its listed files in ``scratch``."""
    if not manifest.sealed:
        return source
    if not passphrase:  # a plain incremental backup of a sealed full one
        raise BackupError(f"{source} is sealed: give its passphrase with --passphrase-env VAR")
    target = scratch / name
    sealing.open_tree(source, passphrase, target, sorted(manifest.files) if manifest.signed else None)
    return target


def restore_backup(
    settings: Settings, source: Path, passphrase: str | None = None, allow_unsigned: bool = False
) -> RestoreResult:
    """Restore ``source`` into ``settings``' data directory, which must hold no installation yet."""
    source = source.resolve()
    manifest = Manifest.read(source)
    _empty_target(settings)
    secret = _signing_secret(settings, source, manifest, passphrase)
    warnings = _checked(settings, source, manifest, secret, allow_unsigned)
    base_source = base_manifest = None
    if manifest.base is not None:
        base_source = _located_base(source, manifest)
        base_manifest = Manifest.read(base_source)
        warnings += _checked(settings, base_source, base_manifest, secret, allow_unsigned)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="stacklens-restore-", dir=settings.data_dir) as scratch_name:
        scratch = Path(scratch_name)
        opened = _opened(source, manifest, passphrase, scratch, "backup")
        base = None
        if base_source is not None and base_manifest is not None:
            base = _opened(base_source, base_manifest, passphrase, scratch, "base")
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
        if os.path.lexists(opened / "control.db"):
            copy_no_follow(opened / "control.db", control)
        home = settings.dagster_home.resolve()
        for relative in manifest.dagster_files:
            target = home / plain_name(relative).as_posix()
            if home not in target.resolve().parents:
                raise BackupError(
                    f"the backup's Dagster file {relative!r} is outside the Dagster home; refused"
                )
            copy_no_follow(opened / "dagster" / relative, target)
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
