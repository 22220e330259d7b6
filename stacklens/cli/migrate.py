"""`stacklens migrate [--status | --dry-run]`: bring the warehouse and the control store up to date."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from stacklens.settings import get_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help="apply pending warehouse and control-store migrations",
        description="Apply pending warehouse (warehouse_sql/migrations) and control-store migrations.",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--status", action="store_true", help="list warehouse migrations, applied or pending")
    group.add_argument("--dry-run", action="store_true", help="print what would be applied; change nothing")
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
    from stacklens.warehouse.migrations import MigrationError, apply_migrations, migration_status

    settings = get_settings()
    try:
        if args.status:
            for state in migration_status(settings):
                when = state.applied_at.isoformat() if state.applied_at else "pending"
                print(f"{state.name}\t{when}")
            return 0
        names = apply_migrations(settings, dry_run=args.dry_run)
    except MigrationError as exc:
        raise CliError(str(exc)) from exc
    verb = "would apply" if args.dry_run else "applied"
    for name in names:
        print(f"warehouse: {verb} {name}")
    if not names:
        print("warehouse: up to date")
    if not args.dry_run:
        migrate_control = _control_migrate()
        if migrate_control is not None:
            migrate_control(settings)
            print("control store: up to date")
    return 0
