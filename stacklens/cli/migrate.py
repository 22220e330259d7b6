"""`stacklens migrate [--status | --dry-run]`: bring the warehouse and the control store up to date."""

from __future__ import annotations

import argparse
import importlib
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
        names = apply_migrations(settings)
    except MigrationError as exc:
        raise CliError(str(exc)) from exc
    for name in names:
        print(f"warehouse: applied {name}")
    if not names:
        print("warehouse: up to date")
    migrate_control = _control_migrate()
    if migrate_control is not None:
        migrate_control(settings)
        print("control store: up to date")
    return 0


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
