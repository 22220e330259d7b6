"""`stacklens backup` / `restore` of a scaled installation: the ClickHouse server's own ``BACKUP … TO
Disk/S3`` and ``pg_dump`` / ``pg_restore`` of the PostgreSQL control store (and the Dagster database when it
has one).

The warehouse backup is written by the server to its disk or bucket (``--warehouse-to disk:NAME`` — a disk
named in the server's ``backups.allowed_disk`` — or ``s3:URL``, credentials in the server's configuration,
never on a command line); ``DIR`` on this host receives the PostgreSQL dumps and the manifest.
:func:`backup_plan` and :func:`restore_plan` say exactly what runs; ``--dry-run`` prints them and changes
nothing."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import URL, make_url

from stacklens.operations.engine_backup import Destination, backup_statement, restore_statement
from stacklens.settings import Settings
from stacklens.warehouse.migrations import cluster_clause


class ScaledBackupError(ValueError):
    """A scaled backup or restore cannot run as asked; the message says why."""


@dataclass(frozen=True)
class Command:
    """A program to run, its arguments and the environment it needs (a password: shown as ``***``)."""

    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def shown(self) -> str:
        prefix = " ".join(f"{k}={'***' if 'PASSWORD' in k else v}" for k, v in sorted(self.env.items()))
        return (prefix + " " if prefix else "") + " ".join(_quoted(a) for a in self.argv)


def _quoted(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


@dataclass
class Plan:
    statements: list[str]
    commands: list[Command]
    name: str

    def lines(self) -> list[str]:
        return [f"{s};" for s in self.statements] + [c.shown() for c in self.commands]


def warehouse_destination(spec: str, name: str) -> Destination:
    """``disk:NAME`` → ``Disk('NAME', '<name>')``; ``s3:URL`` → ``S3('URL/<name>')``."""
    kind, _, where = spec.partition(":")
    where = where.strip()
    if kind == "disk" and where:
        return Destination("Disk", (where, name))
    if kind == "s3" and where.startswith(("https://", "http://")):
        return Destination("S3", (f"{where.rstrip('/')}/{name}",))
    raise ScaledBackupError(
        f"--warehouse-to {spec!r}: use disk:NAME (a disk in the server's backups.allowed_disk) or s3:https://…"
    )


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """A libpq connection URL without its password, and the password as ``PGPASSWORD`` (never on an argv a
    process list shows)."""
    parsed: URL = make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        raise ScaledBackupError(f"{parsed.drivername} is not PostgreSQL: pg_dump cannot read it")
    env = {"PGPASSWORD": parsed.password} if parsed.password else {}
    # URL.set(password=None) leaves the password as it is: the URL is built again without it.
    bare = URL.create(
        "postgresql",
        username=parsed.username,
        host=parsed.host,
        port=parsed.port,
        database=parsed.database,
        query=parsed.query,
    )
    return bare.render_as_string(hide_password=False), env


def _databases(settings: Settings) -> list[tuple[str, str]]:
    """(dump file stem, SQLAlchemy URL) of each PostgreSQL database of the installation."""
    found = []
    if settings.database_url and make_url(settings.database_url).drivername.startswith("postgresql"):
        found.append(("control", settings.database_url))
    if settings.dagster_database_url:
        found.append(("dagster", settings.dagster_database_url))
    return found


def backup_plan(
    settings: Settings, target: Path, warehouse_to: str, base_destination: Destination | None = None
) -> Plan:
    name = f"stacklens-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    on_cluster = cluster_clause(settings.warehouse_cluster)
    statements = [
        backup_statement(
            settings.warehouse_database,
            warehouse_destination(warehouse_to, name),
            base_destination,
            on_cluster,
        )
    ]
    commands = []
    for stem, url in _databases(settings):
        libpq, env = _libpq(url)
        commands.append(
            Command(
                (
                    "pg_dump",
                    "--format=custom",
                    "--no-owner",
                    "--file",
                    str(target / f"{stem}.dump"),
                    "--dbname",
                    libpq,
                ),
                env,
            )
        )
    return Plan(statements, commands, name)


def restore_plan(
    settings: Settings,
    source: Path,
    source_database: str,
    destination: Destination,
    base: Destination | None = None,
) -> Plan:
    on_cluster = cluster_clause(settings.warehouse_cluster)
    statements = [
        restore_statement(source_database, settings.warehouse_database, destination, base, on_cluster)
    ]
    commands = []
    for stem, url in _databases(settings):
        libpq, env = _libpq(url)
        commands.append(
            Command(
                (
                    "pg_restore",
                    "--no-owner",
                    "--exit-on-error",
                    "--dbname",
                    libpq,
                    str(source / f"{stem}.dump"),
                ),
                env,
            )
        )
    return Plan(statements, commands, destination.args[-1])


def run_commands(commands: list[Command]) -> None:
    """Run each command to its end; the first that fails stops the rest, its stderr's last line in the
    error."""
    for command in commands:
        done = subprocess.run(
            list(command.argv), env={**os.environ, **command.env}, capture_output=True, text=True
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ScaledBackupError(f"{command.argv[0]} failed ({done.returncode}): {last}")


SCALED_MANIFEST = "manifest.json"


def run_backup_plan(
    settings: Settings, target: Path, plan: Plan, destination: Destination
) -> dict[str, object]:
    """Run ``plan`` (the server's BACKUP, then the dumps into ``target``) and write the manifest a restore
    reads."""
    import json

    from stacklens.operations.backup_target import claim_target, make_private
    from stacklens.operations.engine_backup import run_backup_statement
    from stacklens.warehouse.client import get_warehouse

    # A new or empty directory, never the data directory; a refusal changes nothing, a failure removes only
    # the dumps and the manifest this run wrote (and the directory when this run made it).
    claimed = claim_target(settings, target)
    try:
        for stem, _ in _databases(settings):
            claimed.entry(f"{stem}.dump")
        figures = run_backup_statement(get_warehouse(settings), plan.statements[0])
        run_commands(plan.commands)
        manifest: dict[str, object] = {
            "format": 1,
            "mode": "scaled",
            "created_at": datetime.now(UTC).isoformat(),
            "database": settings.warehouse_database,
            "warehouse": {"engine": destination.engine, "args": list(destination.args), **figures},
            "dumps": [f"{stem}.dump" for stem, _ in _databases(settings)],
        }
        fd = os.open(claimed.entry(SCALED_MANIFEST), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(manifest, indent=2, sort_keys=True))
        make_private(claimed.path)
    except BaseException:
        claimed.discard()
        raise
    return manifest
