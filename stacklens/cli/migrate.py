"""`stacklens migrate [--status | --dry-run] [--no-backup] [--backup-to DIR]`: bring the warehouse and the
control store up to date.

Before a run holding a migration that drops or rewrites stored rows (on an installation that has data: an
upgrade, not a first start), an embedded installation is backed up first (``<data_dir>/backups/before-migrate-
<time>``, or ``--backup-to DIR``: a folder that already holds something gets a new ``before-migrate-<time>``
directory inside, a path that does not exist yet or an empty directory holds the backup itself); a scaled
one is refused until its operator took `stacklens backup` and says ``--no-backup``. Each step prints a line as
it is recorded; an interrupted run resumes at the first step not recorded. The run is recorded in the
maintenance log (the operators' page).
"""

from __future__ import annotations

import argparse
import importlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stacklens.settings import get_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help="apply pending warehouse and control-store migrations",
        description="Apply pending warehouse (warehouse_sql/migrations) and control-store migrations.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--status", action="store_true", help="list warehouse migrations, applied or pending")
    group.add_argument(
        "--dry-run",
        action="store_true",
        help="print every statement that would run (rendered for STACKLENS_WAREHOUSE_CLUSTER when set); "
        "change nothing",
    )
    parser.add_argument(
        "--no-backup",
        action="store_true",
        help="apply migrations that rewrite or drop data without taking a backup first",
    )
    parser.add_argument(
        "--backup-to",
        type=Path,
        metavar="DIR",
        help="where the backup before a data-rewriting migration goes: a folder (a new before-migrate-<time> "
        "directory is made inside), or a new or empty directory (default <data_dir>/backups/…)",
    )
    parser.set_defaults(func=run)


def _control_migrate() -> Any | None:
    """The control store's migrator; imported late so `migrate --status` works on a warehouse-only install."""
    try:
        module = importlib.import_module("stacklens.control.db")
    except ModuleNotFoundError:
        return None
    return getattr(module, "migrate_control_store", None)


def run(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError
    from stacklens.warehouse.migrations import (
        MigrationError,
        apply_migrations,
        migration_status,
        plan_migrations,
    )

    settings = get_settings()
    try:
        if args.status:
            for state in migration_status(settings):
                when = state.applied_at.isoformat() if state.applied_at else "pending"
                print(f"{state.name}\t{when}")
            return 0
        if args.dry_run:
            return _print_plan(plan_migrations(settings), settings.warehouse_cluster)
        plan = plan_migrations(settings)
    except MigrationError as exc:
        raise CliError(str(exc)) from exc
    migrate_control = _control_migrate()
    # The control store first: its revisions only add tables and columns, and the maintenance log the backup
    # and this run are recorded in is one of them.
    if migrate_control is not None:
        migrate_control(settings)
        print("control store: up to date", flush=True)
    from stacklens.control.maintenance_log import Maintenance

    maintenance = Maintenance("migrate")
    names: list[str] = []
    done: list[str] = []
    backup: Path | None = None
    try:
        with maintenance:
            backup = _backup_first(args, settings, plan)
            recorded = sum(1 for state in migration_status(settings) if state.applied_at is not None)
            if plan and recorded:
                print(f"warehouse: {len(plan)} steps to apply ({recorded} applied before)", flush=True)

            def progress(number: int, total: int, label: str, seconds: float) -> None:
                done.append(label)
                print(f"warehouse: [{number}/{total}] applied {label} ({seconds:.1f} s)", flush=True)

            names = apply_migrations(settings, progress=progress)
    except MigrationError as exc:
        raise CliError(str(exc)) from exc
    finally:
        # What was done, also when the run was cut off (the next run resumes after the last step named here).
        maintenance.summary = (
            f"{len(done)} of {len(plan)} warehouse migrations applied"
            + (f" ({done[0]} … {done[-1]})" if done else "")
            + (f"; backed up first to {backup}" if backup else "")
            + (f" — failed: {maintenance.error}" if maintenance.outcome == "failed" else "")
        )
        maintenance.detail = {"applied": done, "backup": str(backup) if backup else None}
        if migrate_control is not None and (plan or maintenance.outcome == "failed"):
            _record(settings, maintenance)
    if not names:
        print("warehouse: up to date")
    return 0


def _record(settings: Any, maintenance: Any) -> None:
    from stacklens.control.db import session_scope

    with session_scope(settings) as session:
        maintenance.record(session)


def _backup_first(args: argparse.Namespace, settings: Any, plan: list[Any]) -> Path | None:
    """Back up before a run that rewrites or drops data on an installation that has some; the backup's
    path."""
    from stacklens.cli.main import CliError
    from stacklens.warehouse.migrations import migration_status

    rewriting = [step.label for step in plan if step.rewrites_data]
    if not rewriting or args.no_backup:
        return None
    if not any(state.applied_at is not None for state in migration_status(settings)):
        return None  # a first start: nothing stored to lose
    if not settings.embedded_warehouse:
        raise CliError(
            f"{len(rewriting)} pending migrations rewrite or drop data ({', '.join(rewriting)}): take "
            "`stacklens backup --to DIR` first (the server's BACKUP and pg_dump), then run `stacklens migrate "
            "--no-backup`"
        )
    from stacklens.operations.backup import BackupError, run_backup
    from stacklens.operations.engine_backup import EngineBackupError

    target, how = backup_destination(args.backup_to, settings.data_dir)
    print(
        f"warehouse: {', '.join(rewriting)} rewrite or drop data: backing up to {target} first ({how})",
        flush=True,
    )
    try:
        manifest, row = run_backup(settings, target)
    except (BackupError, EngineBackupError) as exc:
        raise CliError(f"the backup before migrating failed, nothing was migrated: {exc}") from exc
    print(f"warehouse: backup {manifest.id} done ({row['summary']})", flush=True)
    return target


def backup_destination(given: Path | None, data_dir: Path) -> tuple[Path, str]:
    """Where the backup before migrating goes, and how that was chosen (printed): ``given`` as the backup
    directory when it does not exist yet or is empty, else as the folder a new ``before-migrate-<time>``
    directory is made in. The backup itself refuses the data directory and anything inside it but a new
    directory under ``<data_dir>/backups`` (stacklens.operations.backup_target)."""
    from stacklens.cli.main import CliError
    from stacklens.operations.backup import MANIFEST

    # Two runs in one second (a retry after an interruption) get directories of their own.
    name = f"before-migrate-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.urandom(2).hex()}"
    if given is None:
        return data_dir / "backups" / name, f"a new directory in {data_dir / 'backups'}"
    folder = given.expanduser().resolve()
    if not os.path.lexists(folder):
        return folder, "a new directory"
    if not folder.is_dir():
        raise CliError(f"--backup-to {given}: not a directory; name a folder or a new directory")
    if not any(folder.iterdir()):
        return folder, "the empty directory given"
    if os.path.lexists(folder / MANIFEST):
        raise CliError(
            f"--backup-to {given} holds a backup already: name the folder it is in, or a new directory"
        )
    return folder / name, f"a new directory in the folder {folder}"


def _print_plan(plan: list[Any], cluster: str | None) -> int:
    """Each pending file's name, then the statements exactly as they would be sent, each ending in ``;``
    (the output can be read, or fed to ``clickhouse-client --multiquery`` by hand)."""
    where = f"cluster {cluster!r}" if cluster else "a single server"
    for step in plan:
        print(f"-- warehouse: would apply {step.label} ({len(step.statements)} statements for {where})")
        for statement in step.statements:
            print(f"{statement};\n")
    if not plan:
        print("-- warehouse: up to date")
    return 0
