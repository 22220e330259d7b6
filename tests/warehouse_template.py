"""A migrated warehouse database for each test, copied from one the process migrated once.

Each test gets a database of its own (``tests/conftest.py``), and most of them migrate it: ~180 statements,
about a second of every such test, most of the suite's fixed cost. The first fresh database a process migrates
is migrated by the real runner and becomes the template; every later fresh database of the same retention is
built from the template's objects as the engine reports them (``SHOW CREATE``: the tables as the migrations
left them, then the views over them), with the template's rows of ``schema_migrations`` and of any table a
migration filled. ``tests/stacklens/warehouse/test_migration_template.py`` checks a copy equals a database the
runner migrated, object by object; the runner's own tests (``tests/stacklens/warehouse/test_migrations.py``)
use the runner itself.

Only what the runner would do on an empty database with no cluster is copied: a dry run, a cluster, a
database that already has tables or a retention other than the template's go to the runner. A run with
``up_to`` (one layer's tests: the raw layer and the issue tables) has a template of its own per ``up_to``.

A copy still costs ~60 statements (0.2-0.4 s of each test). So a test's database is not dropped when it ends
but emptied and kept (:func:`recycle`) when it still has exactly the template's objects, as the template made
them: the tables that hold rows are truncated, the template's own rows written again where a write reached
them, and the database renamed into a small pool. What a pooled database was when taken is known by its
objects' metadata files and its template-filled tables' parts, read from the engine's data directory, and
checked at its end against the same (the engine writes a file anew for every change of an object, a part for
every write); only a copy, or one whose files changed, has its objects' CREATEs compared with the template's
(50 ms of the engine's CPU each time). The statements of a take or of an emptying go to the engine in one
call. The next fresh database of the same template is a pooled one renamed (:func:`copying`), after a check
that it holds the template's rows and nothing else; a database a test altered, added to or dropped from is
dropped, as before. A database never takes a name an earlier test's had (which would spare its views'
remaking): a thread that test left could still write under the name, and caches keyed by it would carry over;
a run that reused names saw another test's rows in a fresh database."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.binding import quote_identifier

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, warehouse_client

Runner = Callable[..., list[str]]


@dataclass(frozen=True)
class Template:
    database: str
    retention: tuple[int, int]
    creates: tuple[str, ...]  # in order: tables, then views and materialized views
    filled: tuple[str, ...]  # tables with rows after migrating (schema_migrations at least)
    applied: tuple[str, ...]  # what the runner returned
    shape: frozenset[tuple[str, str, int]]  # (name, engine, hash of its CREATE without the database's name)
    views: tuple[str, ...]  # the views and materialized views, in ``creates``' order (its last ones)


_templates: dict[tuple[str, int | None], Template] = {}
_lock = threading.Lock()
_runner_only = threading.Event()
# Each object of a database as its metadata file stands: (name, engine, uuid, inode, mtime in ns, size). The
# engine writes an object's file anew (a new inode) for every change of its definition (an ALTER of a column,
# a TTL, a setting, a comment), and a drop, a create or a rename changes the listing's names or uuids: a
# listing equal to an earlier one means the same objects with the same definitions, read from the file
# system in well under a millisecond, where their CREATEs cost the engine ~50 ms (each file parsed and
# printed again, :data:`SHAPE`).
Files = frozenset[tuple[str, str, str, int, int, int]]
# The entries of each template-filled table's data directory: its parts, named by their block numbers. Every
# write makes a part of a new name (an insert, a merge, a mutation, a lightweight delete) and a truncate
# removes them, so unchanged entries mean the rows the template wrote, untouched.
Parts = dict[str, frozenset[str]]
LISTING = """SELECT name, engine, toString(uuid), metadata_path, total_rows, data_paths
FROM system.tables WHERE database = {db:String}"""


@dataclass(frozen=True)
class Listing:
    files: Files | None  # None when a file could not be read: then only the CREATEs tell
    totals: dict[str, int | None]  # each object's rows
    paths: dict[str, list[str]]  # each table's data directories


@dataclass(frozen=True)
class Built:
    """A test database built from ``template`` in the engine's data directory ``root``: its objects' files
    and its filled tables' parts as the build left them, each None when unknown (then its CREATEs are
    checked and the template's rows written again when its test ends)."""

    template: Template
    root: str
    files: Files | None
    parts: Parts | None


# Databases built from a template (by name), and each template's emptied databases waiting for a test, each
# with its tables' files and its filled tables' parts as they were emptied (None: unknown).
_built: dict[str, Built] = {}
_pools: dict[str, list[tuple[str, Files | None, Parts | None]]] = {}
POOL_SIZE = 2
# Each object of a database with its rows: the CREATE is hashed without the database's name, so a copy's
# objects hash as the template's own (the name is a parameter: replaceAll needs a constant).
SHAPE = """SELECT name, engine, total_rows, cityHash64(replaceAll(create_table_query, {prefix:String}, ''))
FROM system.tables WHERE database = {db:String}"""


@contextmanager
def runner_only() -> Iterator[None]:
    """Every migration in this block is the runner's own (the tests of the runner)."""
    _runner_only.set()
    try:
        yield
    finally:
        _runner_only.clear()


def _is_fresh(settings: Settings) -> bool:
    admin = warehouse_client(settings.resolved_warehouse_url, "default")
    return not admin.query(
        "SELECT count() FROM system.tables WHERE database = {db:String}",
        parameters={"db": settings.warehouse_database},
    ).result_rows[0][0]


def _build(runner: Runner, settings: Settings, up_to: int | None) -> Template:
    database = f"t_template_{uuid.uuid4().hex[:8]}"
    source = settings.model_copy(update={"warehouse_database": database})
    applied = runner(source) if up_to is None else runner(source, up_to=up_to)
    admin = warehouse_client(settings.resolved_warehouse_url, "default")
    rows = admin.query(
        "SELECT name, engine, total_rows FROM system.tables WHERE database = {db:String} ORDER BY name",
        parameters={"db": database},
    ).result_rows
    views = {"View", "MaterializedView"}
    ordered = [name for name, engine, _ in rows if engine not in views] + [
        name for name, engine, _ in rows if engine in views
    ]
    creates = tuple(
        admin.query(
            "SHOW CREATE TABLE {db:Identifier}.{t:Identifier}", parameters={"db": database, "t": name}
        ).result_rows[0][0]
        for name in ordered
    )
    filled = tuple(name for name, engine, total in rows if engine not in views and total)
    objects = _objects(admin, database)
    shape = frozenset((name, engine, digest) for name, engine, _, digest in objects)
    names = tuple(name for name, engine, _ in rows if engine in views)
    return Template(database, _retention(settings), creates, filled, tuple(applied), shape, names)


def _objects(admin: Any, database: str) -> list[tuple[str, str, int | None, int]]:
    """(name, engine, rows, hash of the CREATE without the database's name) of each object of ``database``."""
    rows = admin.query(SHAPE, parameters={"db": database, "prefix": f"{database}."}).result_rows
    return [(name, engine, total, digest) for name, engine, total, digest in rows]


def _retention(settings: Settings) -> tuple[int, int]:
    return settings.retention_days, settings.log_retention_days


def _root(settings: Settings) -> str:
    """The embedded engine's data directory, which the tables' ``metadata_path`` are relative to."""
    return settings.resolved_warehouse_url.removeprefix("chdb://")


def _listing(admin: Any, database: str, root: str) -> Listing:
    """``database``'s objects as their metadata files stand, their rows and their data directories."""
    rows = admin.query(LISTING, parameters={"db": database}).result_rows
    totals = {name: total for name, _, _, _, total, _ in rows}
    paths = {name: list(where) for name, _, _, _, _, where in rows}
    files: set[tuple[str, str, str, int, int, int]] | None = set()
    for name, engine, uuid_, path, _, _ in rows:
        try:
            stat = os.stat(os.path.join(root, path))
        except OSError:
            files = None
            break
        files.add((name, engine, uuid_, stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return Listing(None if files is None else frozenset(files), totals, paths)


def _parts(listing: Listing, tables: tuple[str, ...]) -> Parts | None:
    """The entries of each of ``tables``' one data directory; None when one cannot be read."""
    found: Parts = {}
    for table in tables:
        where = listing.paths.get(table, [])
        if len(where) != 1:
            return None
        try:
            found[table] = frozenset(os.listdir(where[0]))
        except OSError:
            return None
    return found


def _tables(files: Files | None, template: Template) -> Files | None:
    """The tables' part of ``files`` (the views are made again when a pooled database is taken)."""
    return None if files is None else frozenset(f for f in files if f[0] not in template.views)


def _at(database: str, name: str) -> str:
    return f"{quote_identifier(database)}.{quote_identifier(name)}"


def _refill(database: str, source: str, table: str) -> str:
    """The statement that writes ``source``'s rows of ``table`` into ``database``'s."""
    return f"INSERT INTO {_at(database, table)} SELECT * FROM {_at(source, table)}"  # noqa: S608 - quoted names


def _batch(admin: Any, statements: list[str]) -> None:
    """Run ``statements`` in order as one call of the engine, which stops at the first that fails and raises
    its error: each call has a fixed cost of its own (~1-2 ms of CPU here), and a database takes ~20."""
    if statements:
        admin.command(";\n".join(statements))


def copy_template(template: Template, settings: Settings) -> list[str]:
    """Build ``settings``' database from ``template`` (a pooled one renamed, else copied); what the runner
    would have returned."""
    admin = warehouse_client(settings.resolved_warehouse_url, "default")
    target = settings.warehouse_database
    if _take_pooled(admin, template, target, _root(settings)):
        return list(template.applied)
    ensure_database(settings)
    _batch(
        admin,
        [statement.replace(f"{template.database}.", f"{target}.") for statement in template.creates]
        + [_refill(target, template.database, table) for table in template.filled],
    )
    with _lock:
        # Its objects are checked against the template's by their CREATEs when its test ends (a copy is
        # made the way no other database is: that check is what tells the copy is right).
        _built[target] = Built(template, _root(settings), None, None)
    return list(template.applied)


def _take_pooled(admin: Any, template: Template, target: str, root: str) -> bool:
    """Rename a pooled database of ``template`` to ``target`` (an empty database or none): True when one was
    there and still empty but for the template's own tables (a write that came after it was emptied, from a
    thread its test left, drops it)."""
    while True:
        with _lock:
            pool = _pools.get(template.database)
            if not pool:
                return False
            pooled, tables, parts = pool.pop()
        # A view keeps the database name it was made with: an insert into the renamed database's tables would
        # reach no materialized view. Made again under the new name (a few ms each, no rows), in one call.
        views = template.creates[len(template.creates) - len(template.views) :]
        drop_views = (
            ["DROP TABLE " + ", ".join(_at(target, name) for name in template.views)] if views else []
        )
        _batch(
            admin,
            [
                f"DROP DATABASE IF EXISTS {quote_identifier(target)}",
                f"RENAME DATABASE {quote_identifier(pooled)} TO {quote_identifier(target)}",
                *drop_views,
                *(statement.replace(f"{template.database}.", f"{target}.") for statement in views),
            ],
        )
        listing = _listing(admin, target, root)
        if any(total for name, total in listing.totals.items() if name not in template.filled):
            admin.command("DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": target})
            continue
        # Its tables' files and parts as they were when it was emptied: then the listing stands for the
        # template's objects (the views were made just now from the template's CREATEs) and the template's
        # rows. Otherwise (a late ALTER or write from a thread its test left, a file not read) its CREATEs
        # are checked and the template's rows written again when its test ends.
        same_files = tables is not None and _tables(listing.files, template) == tables
        now = _parts(listing, template.filled)
        with _lock:
            _built[target] = Built(
                template,
                root,
                listing.files if same_files else None,
                now if parts is not None and now == parts else None,
            )
        return True


def recycle(admin: Any, database: str) -> bool:
    """Empty ``database`` (a test's, at its end) into its template's pool: True when it was built from a
    template, still has exactly the template's objects as the template made them, and the pool had room;
    False when the caller should drop it."""
    with _lock:
        built = _built.pop(database, None)
        if built is None or len(_pools.get(built.template.database, ())) >= POOL_SIZE:
            return False
    template = built.template
    listing = _listing(admin, database, built.root)
    # The files as its build left them: the template's objects, unaltered. Else its CREATEs say.
    if listing.files is None or listing.files != built.files:
        objects = _objects(admin, database)
        if frozenset((name, engine, digest) for name, engine, _, digest in objects) != template.shape:
            return False
    # The tables that hold rows are emptied, and the template's own tables written again unless their parts
    # are the ones the build left (nothing wrote to them since): even an unchanged count is no proof, as a
    # replacing table's rows can change and merge back to the same count.
    parts = _parts(listing, template.filled)
    statements = []
    for name, total in listing.totals.items():
        if name in template.filled:
            if built.parts is None or parts is None or parts.get(name) != built.parts.get(name):
                statements += [
                    f"TRUNCATE TABLE {_at(database, name)}",
                    _refill(database, template.database, name),
                ]
        elif total:
            statements.append(f"TRUNCATE TABLE {_at(database, name)}")
    pooled = f"t_pool_{uuid.uuid4().hex[:12]}"
    statements.append(f"RENAME DATABASE {quote_identifier(database)} TO {quote_identifier(pooled)}")
    _batch(admin, statements)
    # Emptying and renaming write no metadata file: its tables' files stay as listed until it is taken. The
    # parts of its template-filled tables are read again, after their rows were written.
    emptied = _parts(listing, template.filled)
    with _lock:
        _pools.setdefault(template.database, []).append((pooled, _tables(listing.files, template), emptied))
    return True


def release(admin: Any, database: str) -> None:
    """A test's ``database`` at its end: emptied into its template's pool (:func:`recycle`), else dropped —
    not SYNC: the engine forgets the database at once and removes its files in the background."""
    with contextlib.suppress(Exception):
        if recycle(admin, database):
            return
    with contextlib.suppress(Exception):
        admin.command("DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": database})


def template_for(runner: Runner, settings: Settings, up_to: int | None = None) -> Template:
    """The process's template for ``settings``' warehouse (the files up to ``up_to``, else all), migrated by
    ``runner`` on first use."""
    key = (settings.resolved_warehouse_url, up_to)
    with _lock:
        template = _templates.get(key)
        if template is None:
            template = _build(runner, settings, up_to)
            _templates[key] = template
        return template


def copying(runner: Runner) -> Runner:
    """``runner`` (the migration runner), copying the template where that gives the same database."""

    def apply_migrations(
        settings: Settings, *, dry_run: bool = False, up_to: int | None = None, progress: Any = None
    ) -> list[str]:
        if progress is not None:
            return runner(settings, dry_run=dry_run, up_to=up_to, progress=progress)
        if (
            _runner_only.is_set()
            or dry_run
            or settings.warehouse_cluster
            or not settings.resolved_warehouse_url.startswith("chdb://")
            or not _is_fresh(settings)
        ):
            return runner(settings, dry_run=dry_run, up_to=up_to)
        template = template_for(runner, settings, up_to)
        if template.retention != _retention(settings):
            return runner(settings, up_to=up_to)
        return copy_template(template, settings)

    return functools.wraps(runner)(apply_migrations)
