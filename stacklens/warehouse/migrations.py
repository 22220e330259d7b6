"""Apply ``warehouse_sql/migrations/NNNN_*.sql`` in order and record them in ClickHouse.

State lives in the warehouse itself (table ``schema_migrations``), so a ClickHouse server shared by many API
workers has one truth. Each applied file is recorded with the SHA-256 of its text: editing a file that was
already applied is refused, naming the file, instead of silently diverging from what the tables really are.

Files may use SQL macros (``${issue_elements}``, :mod:`stacklens.warehouse.macros`): they are expanded as the
file is read, and the checksum is taken over the expanded text, so writing an applied file's expression as a
macro leaves its checksum as recorded.

Files may carry ``${retention_days}``; the runner fills it from ``STACKLENS_RETENTION_DAYS``. The checksum is
taken over the text *before* substitution, so changing the retention is not an edit: the runner notices the
recorded retention differs and issues ``ALTER TABLE … MODIFY TTL`` with the new value.

Cluster DDL: with ``STACKLENS_WAREHOUSE_CLUSTER`` set, statements are rendered by their role for a replicated,
sharded cluster (:mod:`stacklens.warehouse.cluster`: ``Replicated*MergeTree`` data tables named
``<table>_local``, a ``Distributed`` table under the original name, materialized views between the data
tables, ``ON CLUSTER`` on all DDL). Files stay cluster-agnostic, so their checksums do not depend on the
deployment. A statement the rules do not fit writes ``${on_cluster}`` where the clause belongs; the runner
fills it (or removes it without a cluster). Without a cluster every statement runs exactly as the file
writes it."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.cluster import ClusterDDLError, ClusterLayout, data_tables, render
from stacklens.warehouse.cluster import cluster_clause as _cluster_clause
from stacklens.warehouse.cluster import with_cluster as with_cluster  # re-exported for callers
from stacklens.warehouse.macros import MacroError, render_macros
from stacklens.warehouse.queries import MIGRATIONS_DIR, load_query

MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
RETENTION_PLACEHOLDER = "${retention_days}"
# Raw log records keep a retention of their own (STACKLENS_LOG_RETENTION_DAYS): a file of the `logs` table
# writes this one instead, and its recorded retention is that setting.
LOG_RETENTION_PLACEHOLDER = "${log_retention_days}"
ON_CLUSTER_PLACEHOLDER = "${on_cluster}"
_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
# The TTL clause runs to the end of its line (files put SETTINGS, if any, on a later line).
_TTL = re.compile(r"^\s*TTL\s+(.+?)\s*$", re.IGNORECASE | re.MULTILINE)

SCHEMA_MIGRATIONS_DDL = load_query("warehouse/schema_migrations")

# One runner at a time per process: `stacklens serve` migrates on start while a test may call it too.
_run_lock = threading.Lock()


class MigrationError(RuntimeError):
    """A migration file cannot be applied as it is; the message names the file."""


@dataclass(frozen=True)
class MigrationFile:
    name: str
    path: Path
    text: str

    @property
    def number(self) -> int:
        return int(self.name[:4])

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def uses_retention(self) -> bool:
        return RETENTION_PLACEHOLDER in self.text or LOG_RETENTION_PLACEHOLDER in self.text

    def retention_of(self, settings: Settings) -> int:
        """The retention this file is applied (and recorded) with: the logs' own when it writes theirs."""
        if LOG_RETENTION_PLACEHOLDER in self.text:
            return settings.log_retention_days
        return settings.retention_days

    def split(self, retention_days: int, log_retention_days: int | None = None) -> list[str]:
        """The file's statements as written, ``${retention_days}`` (and ``${log_retention_days}``, which
        defaults to it) filled in (files may hold several statements, split on ``;`` at a line end)."""
        logs = retention_days if log_retention_days is None else log_retention_days
        body = self.text.replace(LOG_RETENTION_PLACEHOLDER, str(int(logs)))
        body = body.replace(RETENTION_PLACEHOLDER, str(int(retention_days)))
        parts = re.split(r";\s*(?:--[^\n]*)?\n", body + "\n")
        return [part.strip() for part in parts if _has_sql(part)]

    def statements(
        self, retention_days: int, layout: ClusterLayout | None = None, log_retention_days: int | None = None
    ) -> list[str]:
        """What the runner sends for this file: the statements as written, or rendered for ``layout``'s
        cluster (:mod:`stacklens.warehouse.cluster`); ``${on_cluster}`` is removed without a cluster."""
        parts = self.split(retention_days, log_retention_days)
        if layout is None:
            return [part.replace(ON_CLUSTER_PLACEHOLDER, "") for part in parts]
        try:
            return [rendered for part in parts for rendered in render(part, layout)]
        except ClusterDDLError as exc:
            raise MigrationError(f"{self.path.name}: {exc}") from exc


def cluster_clause(cluster: str | None) -> str:
    """`` ON CLUSTER '<name>'``, or ``""`` without a cluster; a name outside ``[A-Za-z0-9_.{}-]`` is
    refused."""
    try:
        return _cluster_clause(cluster)
    except ClusterDDLError as exc:
        raise MigrationError(str(exc)) from exc


def cluster_layout(settings: Settings, files: list[MigrationFile] | None = None) -> ClusterLayout | None:
    """How ``settings``' cluster is laid out (every migration file tells which tables hold data), or None
    without a cluster."""
    if not settings.warehouse_cluster:
        return None
    cluster_clause(settings.warehouse_cluster)
    statements = [SCHEMA_MIGRATIONS_DDL.strip()]
    for migration in discover() if files is None else files:
        statements.extend(migration.split(settings.retention_days, settings.log_retention_days))
    return ClusterLayout(settings.warehouse_cluster, settings.warehouse_database, data_tables(statements))


@dataclass(frozen=True)
class MigrationState:
    name: str
    checksum: str
    applied_at: datetime | None  # None: pending
    retention_days: int | None


def _has_sql(text: str) -> bool:
    return any(line.strip() and not line.strip().startswith("--") for line in text.splitlines())


def discover(directory: Path = MIGRATIONS_DIR) -> list[MigrationFile]:
    """The migration files in number order; two files with one number is an error."""
    files: list[MigrationFile] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.sql")):
        match = MIGRATION_NAME.match(path.name)
        if not match:
            raise MigrationError(f"{path.name}: migration files are named NNNN_<verb>_<object>.sql")
        number = match.group(1)
        if number in seen:
            raise MigrationError(f"{path.name}: number {number} is already used by {seen[number]}")
        seen[number] = path.name
        # Rendered before anything else: the checksum is taken over the text with its macros expanded.
        try:
            text = render_macros(path.read_text(), path.name)
        except MacroError as exc:
            raise MigrationError(str(exc)) from exc
        files.append(MigrationFile(path.stem, path, text))
    return files


def _recorded(settings: Settings) -> dict[str, MigrationState]:
    client = get_warehouse(settings)
    exists = client.query(
        load_query("warehouse/schema_migrations_exists"),
        parameters={"db": settings.warehouse_database},
    ).result_rows[0][0]
    if not exists:
        return {}
    rows = client.query(load_query("warehouse/applied_migrations")).result_rows
    return {
        name: MigrationState(name, checksum, applied, int(days)) for name, checksum, applied, days in rows
    }


def _database_exists(settings: Settings) -> bool:
    from stacklens.warehouse.client import open_client

    admin = open_client(settings.resolved_warehouse_url, None)
    return bool(
        admin.query(
            load_query("warehouse/database_exists"),
            parameters={"db": settings.warehouse_database},
        ).result_rows[0][0]
    )


def migration_status(settings: Settings) -> list[MigrationState]:
    """Every migration file with its applied time (``applied_at`` None when pending)."""
    recorded = _recorded(settings) if _database_exists(settings) else {}
    out = []
    for migration in discover():
        state = recorded.get(migration.name)
        if state is None:
            out.append(MigrationState(migration.name, migration.checksum, None, None))
        else:
            out.append(state)
    return out


def _check_checksums(files: list[MigrationFile], recorded: dict[str, MigrationState]) -> None:
    for migration in files:
        state = recorded.get(migration.name)
        if state is not None and state.checksum != migration.checksum:
            raise MigrationError(
                f"{migration.path.name} was changed after it was applied (checksum differs); "
                "add a new migration file instead of editing an applied one"
            )


def _record(settings: Settings, migration: MigrationFile, applied_at: datetime) -> None:
    now = datetime.now(UTC)
    # On a cluster the row goes through the Distributed table: wait until it is on its shard, so the next
    # `migrate --status` (or run) reads it whatever the server's default.
    cluster = {"distributed_foreground_insert": 1} if settings.warehouse_cluster else None
    get_warehouse(settings).insert(
        "schema_migrations",
        [[migration.name, migration.checksum, migration.retention_of(settings), applied_at, now]],
        column_names=["name", "checksum", "retention_days", "applied_at", "updated_at"],
        settings=cluster,
    )


def _ttl_statements(settings: Settings, migration: MigrationFile, layout: ClusterLayout | None) -> list[str]:
    """The file's TTL re-issued with the current retention (``ALTER TABLE … MODIFY TTL``), rendered like the
    file (on a cluster: on the data tables)."""
    out = []
    for statement in migration.split(settings.retention_days, settings.log_retention_days):
        table, ttl = _TABLE.search(statement), _TTL.search(statement)
        if table and ttl:
            alter = f"ALTER TABLE {table.group(1)} MODIFY TTL {ttl.group(1)}"
            out.extend([alter] if layout is None else render(alter, layout))
    return out


# Statements that rewrite or drop stored rows (a table, a column, a partition, rows by mutation, a swap of
# tables): `stacklens migrate` backs up before a run holding one (docs/operations.md).
_REWRITES = re.compile(
    r"^\s*(DROP\s+TABLE|TRUNCATE|EXCHANGE\s+TABLES|RENAME\s+TABLE)\b"
    r"|\bDROP\s+(COLUMN|PARTITION)\b|\bMODIFY\s+COLUMN\b|\bALTER\s+TABLE\s+\S+(\s+ON\s+CLUSTER\s+\S+)?\s+(DELETE|UPDATE)\b",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class PlannedMigration:
    """One step of a run: a pending file (``retention_only`` False) or a retention change of an applied
    one."""

    migration: MigrationFile
    statements: list[str]
    retention_only: bool
    label: str

    @property
    def rewrites_data(self) -> bool:
        """Whether a statement of this step drops or rewrites stored rows (a TTL change only expires them)."""
        return not self.retention_only and any(_REWRITES.search(s) for s in self.statements)


def plan_migrations(settings: Settings, *, up_to: int | None = None) -> list[PlannedMigration]:
    """What :func:`apply_migrations` would run, statement by statement, rendered for this deployment; reads
    the recorded state and changes nothing."""
    with _run_lock:
        return _plan(settings, up_to, _recorded(settings) if _database_exists(settings) else {})


def _plan(
    settings: Settings, up_to: int | None, recorded: dict[str, MigrationState]
) -> list[PlannedMigration]:
    every = discover()
    layout = cluster_layout(settings, every)  # a bad cluster name is refused before anything runs
    files = [m for m in every if up_to is None or m.number <= up_to]
    _check_checksums(files, recorded)
    plan = []
    for migration in files:
        state = recorded.get(migration.name)
        if state is None:
            statements = migration.statements(settings.retention_days, layout, settings.log_retention_days)
            plan.append(PlannedMigration(migration, statements, False, migration.name))
        elif migration.uses_retention and state.retention_days != migration.retention_of(settings):
            label = f"{migration.name} (retention {migration.retention_of(settings)} days)"
            plan.append(
                PlannedMigration(migration, _ttl_statements(settings, migration, layout), True, label)
            )
    return plan


def apply_migrations(
    settings: Settings,
    *,
    dry_run: bool = False,
    up_to: int | None = None,
    progress: Callable[[int, int, str, float], None] | None = None,
) -> list[str]:
    """Apply pending migrations (and retention changes); return the names applied, or that would be.

    A retention change re-applies the TTL of files that use ``${retention_days}``; such files are listed as
    ``<name> (retention <days> days)``. ``up_to`` stops after that file number (e.g. ``99``: the raw layer
    only), for staged upgrades and for tests of one layer. ``progress`` hears each step as it is recorded:
    (its number, the steps of the run, its label, its seconds).

    An interrupted run resumes where it stopped: each file is recorded once its statements ran, and the
    next run starts at the first file not recorded (the files' statements are written to run again: IF NOT
    EXISTS)."""
    if dry_run:
        return [step.label for step in plan_migrations(settings, up_to=up_to)]
    layout = cluster_layout(settings)  # a bad cluster name is refused before anything runs
    with _run_lock:
        ensure_database(settings)
        client = get_warehouse(settings)
        for statement in (
            [SCHEMA_MIGRATIONS_DDL] if layout is None else render(SCHEMA_MIGRATIONS_DDL.strip(), layout)
        ):
            client.command(statement)
        recorded = _recorded(settings)
        done: list[str] = []
        steps = _plan(settings, up_to, recorded)
        for number, step in enumerate(steps, start=1):
            started = time.monotonic()
            for statement in step.statements:
                client.command(statement)
            # A retention change keeps the time the file was first applied.
            applied = recorded[step.migration.name].applied_at if step.retention_only else None
            _record(settings, step.migration, applied or datetime.now(UTC))
            done.append(step.label)
            if progress is not None:
                progress(number, len(steps), step.label, time.monotonic() - started)
        return done
