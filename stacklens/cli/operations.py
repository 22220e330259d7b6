"""`stacklens backup`, `restore`, `status --storage` and `retention run` (docs/operations.md;
docs/operations.md).

Embedded: while `stacklens serve` owns the warehouse, `backup`, `status` and `retention run` go through its
token-protected local endpoint (the engine opens one data directory per process); otherwise they open the
data directory themselves. `restore` goes into an empty data directory, so no server owns it. Scaled (a
ClickHouse server): the server's BACKUP and pg_dump; ``--dry-run`` prints what would run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from stacklens.cli.main import CliError
from stacklens.settings import Settings, get_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = subparsers.add_parser(
        "backup",
        help="back up the installation (warehouse, control store, schedules), online",
        description="Back up the installation into DIR while it serves: the warehouse with every event, the "
        "control store, the Dagster schedules' state; the secret key only in a sealed backup.",
    )
    backup.add_argument("--to", required=True, type=Path, metavar="DIR", help="a new or empty directory")
    backup.add_argument(
        "--incremental-from",
        type=Path,
        metavar="DIR",
        help="a full backup: keep only what changed since it",
    )
    backup.add_argument(
        "--passphrase-env",
        metavar="VAR",
        help="seal the backup (every file encrypted, the secret key inside) with the passphrase in $VAR",
    )
    backup.add_argument(
        "--warehouse-to",
        default="disk:backups",
        metavar="disk:NAME|s3:URL",
        help="scaled mode: where the ClickHouse server writes its backup (default disk:backups)",
    )
    backup.add_argument("--dry-run", action="store_true", help="print what would run; change nothing")
    backup.add_argument("--json", action="store_true", help="print one JSON object")
    backup.set_defaults(func=_backup)

    restore = subparsers.add_parser(
        "restore",
        help="restore a backup into an empty data directory",
        description="Restore the backup in DIR into this (empty) data directory, check every raw table against "
        "the backup's checksums, and migrate it to this version.",
    )
    restore.add_argument("--from", dest="source", required=True, type=Path, metavar="DIR")
    restore.add_argument("--passphrase-env", metavar="VAR", help="the sealed backup's passphrase is in $VAR")
    restore.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="a backup of a version before signed manifests: restore it without the signature check (its "
        "names and links are still checked); only for a backup kept where nobody else writes",
    )
    restore.add_argument("--dry-run", action="store_true", help="print what would run; change nothing")
    restore.add_argument("--json", action="store_true", help="print one JSON object")
    restore.set_defaults(func=_restore)

    status = subparsers.add_parser("status", help="the installation's state (--storage: its disk)")
    status.add_argument(
        "--storage",
        action="store_true",
        help="bytes per table and per project, oldest event kept, free disk, days until full",
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func=_status)

    retention = subparsers.add_parser("retention", help="apply the projects' retention now")
    commands = retention.add_subparsers(dest="retention_command", metavar="COMMAND", required=True)
    run = commands.add_parser(
        "run", help="delete each project's raw rows older than its own retention and free the disk"
    )
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(func=_retention)


def _passphrase(var: str | None) -> str | None:
    if var is None:
        return None
    value = os.environ.get(var)
    if not value:
        raise CliError(f"--passphrase-env {var}: ${var} is not set or empty")
    if len(value) < 12:
        raise CliError(f"--passphrase-env {var}: the passphrase is shorter than 12 characters")
    return value


def _through_server(settings: Settings, method: str, path: str, payload: dict[str, Any] | None) -> Any:
    """The running server's answer when it owns the embedded warehouse, else ``None`` (run here)."""
    from stacklens.server_link import ServerUnreachable, call_server, read_link

    if not settings.embedded_warehouse:
        return None
    link = read_link(settings)
    if link is None:
        return None
    try:
        return call_server(link, method, path, payload)
    except ServerUnreachable:
        return None  # a stale token file of a server that died: open the warehouse here
    except RuntimeError as exc:
        raise CliError(str(exc)) from exc


def _ready(settings: Settings) -> None:
    """Both stores at this version before a backup made here (a backup never holds a half-migrated store)."""
    from stacklens.control.db import migrate_control_store
    from stacklens.warehouse.migrations import apply_migrations

    apply_migrations(settings)
    migrate_control_store(settings)


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.json:
        print(line, flush=True)


def _backup(args: argparse.Namespace) -> int:
    from stacklens.operations.backup import BackupError, run_backup
    from stacklens.operations.engine_backup import EngineBackupError

    settings = get_settings()
    passphrase = _passphrase(args.passphrase_env)
    if not settings.embedded_warehouse:
        return _scaled_backup(args, settings)
    target = args.to.expanduser().resolve()
    base = args.incremental_from.expanduser().resolve() if args.incremental_from else None
    if args.dry_run:
        from stacklens.operations.engine_backup import Destination, backup_statement

        print(
            backup_statement(
                settings.warehouse_database,
                Destination("File", (str(target / "warehouse"),)),
                Destination("File", (str(base / "warehouse"),)) if base else None,
            )
            + ";"
        )
        print(f"-- control store: SQLite online copy to {target / 'control.db'}")
        print(f"-- Dagster instance: SQLite online copies of {settings.dagster_home}/**/*.db")
        print(
            f"-- sealed with ${args.passphrase_env}" if passphrase else "-- not sealed; no secret key inside"
        )
        return 0
    _say(args, f"backup: to {target}{f' (incremental from {base})' if base else ''}")
    answer = _through_server(
        settings,
        "POST",
        "/api/operations/backup",
        {"to": str(target), "incremental_from": str(base) if base else None, "passphrase": passphrase},
    )
    if answer is not None:
        manifest, run = answer["manifest"], answer["run"]
        _say(args, "backup: made by the running server (it owns the warehouse; ingest kept answering)")
    else:
        # No migration first: a backup taken before an upgrade must hold the data as the old version left it.
        try:
            made, run = run_backup(settings, target, base, passphrase)
        except (BackupError, EngineBackupError) as exc:
            raise CliError(str(exc)) from exc
        manifest = made.as_json()
    if args.json:
        print(json.dumps({"manifest": manifest, "run": run}))
    else:
        kept = {t: v["rows"] for t, v in manifest["tables"].items() if v.get("kept")}
        print(
            f"backup: cut-off {manifest['cutoff']} ({manifest['rows_waiting_at_cutoff']} rows answered later)"
        )
        print(f"backup: raw rows {', '.join(f'{t} {n:,}' for t, n in kept.items())}")
        print(f"backup: {run['summary']} in {run['duration_ms'] / 1000:.1f} s")
    if not manifest["sealed"]:
        print(
            f"stacklens: the backup holds no secret key: keep {settings.data_dir / 'secret_key'} (or "
            "STACKLENS_SECRET_KEY) apart and safe; a restore needs it to open stored keys and tokens "
            "(or seal the backup with --passphrase-env VAR to carry it inside)",
            file=sys.stderr,
        )
    return 0


def _scaled_backup(args: argparse.Namespace, settings: Settings) -> int:
    from stacklens.operations.engine_backup import Destination, EngineBackupError
    from stacklens.operations.scaled import (
        SCALED_MANIFEST,
        ScaledBackupError,
        backup_plan,
        run_backup_plan,
        warehouse_destination,
    )

    target = args.to.expanduser().resolve()
    base = None
    try:
        if args.incremental_from:
            recorded = json.loads((args.incremental_from / SCALED_MANIFEST).read_text())["warehouse"]
            base = Destination(recorded["engine"], tuple(recorded["args"]))
        plan = backup_plan(settings, target, args.warehouse_to, base)
        if args.dry_run:
            print(f"-- scaled backup {plan.name}: would run")
            for line in plan.lines():
                print(line)
            return 0
        destination = warehouse_destination(args.warehouse_to, plan.name)
        manifest = run_backup_plan(settings, target, plan, destination)
    except (OSError, ValueError, KeyError, ScaledBackupError, EngineBackupError) as exc:
        raise CliError(f"scaled backup: {exc}") from exc
    print(json.dumps(manifest) if args.json else f"backup: {plan.name} written ({target})")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.maintenance_log import Maintenance
    from stacklens.operations.backup import BackupError
    from stacklens.operations.engine_backup import EngineBackupError
    from stacklens.operations.restore import restore_backup
    from stacklens.operations.sealing import SealError
    from stacklens.warehouse.migrations import apply_migrations

    settings = get_settings()
    source = args.source.expanduser().resolve()
    if (source / "manifest.json").is_symlink():
        raise CliError(
            f"{source}/manifest.json is a symbolic link: a backup StackLens made holds none; refused"
        )
    try:
        raw = json.loads((source / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        raise CliError(f"{source} is not a readable backup ({exc})") from exc
    if not isinstance(raw, dict):
        raise CliError(f"{source}/manifest.json is not a StackLens backup's manifest")
    if raw.get("mode") == "scaled" or not settings.embedded_warehouse:
        return _scaled_restore(args, settings, source, raw)
    if args.dry_run:
        print(f"-- would restore backup {raw.get('id')} ({raw.get('kind')}) into {settings.data_dir}")
        return 0
    maintenance = Maintenance("restore")
    try:
        with maintenance:
            _say(args, f"restore: {source} into {settings.data_dir}")
            result = restore_backup(
                settings, source, _passphrase(args.passphrase_env), allow_unsigned=args.allow_unsigned
            )
            _say(
                args,
                f"restore: {result.tables_checked} raw tables, {result.rows_checked:,} rows match the backup",
            )
            applied = apply_migrations(settings)
            migrate_control_store(settings)
            _say(args, f"restore: migrated ({len(applied)} warehouse migrations applied)")
            maintenance.summary = (
                f"restore of {result.manifest.kind} backup {result.manifest.id} from {source}: "
                f"{result.rows_checked:,} raw rows checked"
            )
            maintenance.detail = {"id": result.manifest.id, "path": str(source), "migrated": applied}
    except (BackupError, EngineBackupError, SealError) as exc:
        raise CliError(str(exc)) from exc
    finally:
        if maintenance.outcome == "succeeded":
            with session_scope(settings) as session:
                maintenance.record(session)
    for warning in result.warnings:
        print(f"stacklens: {warning}", file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {"id": result.manifest.id, "rows_checked": result.rows_checked, "warnings": result.warnings}
            )
        )
    return 0


def _scaled_restore(args: argparse.Namespace, settings: Settings, source: Path, raw: dict[str, Any]) -> int:
    from stacklens.operations.engine_backup import Destination, EngineBackupError, run_backup_statement
    from stacklens.operations.scaled import ScaledBackupError, restore_plan, run_commands
    from stacklens.warehouse.client import get_warehouse

    if raw.get("mode") != "scaled":
        raise CliError(
            f"{source} is a backup of an embedded installation; restore it with STACKLENS_WAREHOUSE_URL unset"
        )
    try:
        recorded = raw["warehouse"]
        plan = restore_plan(
            settings, source, str(raw["database"]), Destination(recorded["engine"], tuple(recorded["args"]))
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CliError(
            f"{source}/manifest.json is not a scaled backup's manifest this version reads ({exc})"
        ) from exc
    if args.dry_run:
        print(f"-- scaled restore of {plan.name}: would run")
        for line in plan.lines():
            print(line)
        return 0
    try:
        run_backup_statement(get_warehouse(settings), plan.statements[0])
        run_commands(plan.commands)
    except (ScaledBackupError, EngineBackupError) as exc:
        raise CliError(f"scaled restore: {exc}") from exc
    print(f"restore: {plan.name} restored")
    return 0


def _status(args: argparse.Namespace) -> int:
    if not args.storage:
        raise CliError("status needs --storage (the only report so far)")
    settings = get_settings()
    report = _through_server(settings, "GET", "/api/operations/storage", None)
    if report is None:
        from stacklens.operations.storage import measure_storage

        _ready(settings)
        report = measure_storage(settings).as_json()
    if args.json:
        print(json.dumps(report))
        return 0
    from stacklens.operations.storage_lines import storage_lines

    print("\n".join(storage_lines(report)))
    return 0


def _retention(args: argparse.Namespace) -> int:
    settings = get_settings()
    answer = _through_server(settings, "POST", "/api/operations/retention", None)
    if answer is None:
        from stacklens.operations.retention import apply_retention

        _ready(settings)
        outcome, run = apply_retention(settings)
        answer = {"outcome": outcome.as_json(), "run": run}
    print(json.dumps(answer) if args.json else f"retention: {answer['run']['summary']}")
    return 0 if answer["run"]["outcome"] == "succeeded" else 1
