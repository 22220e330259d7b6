"""A migrated SQLite control store for each test, copied from one the process migrated once.

Most tests migrate a control store of their own (``settings``' ``control.db``): twenty Alembic revisions,
batch-mode table copies included, ~0.1-0.2 s of each such test on this machine's cores and more on a busy
one, paid by well over a thousand tests. The first empty SQLite store a process migrates is migrated by the
real runner (:func:`stacklens.control.db.migrate_control_store`) in a file of its own, the template; every
later empty SQLite store is filled with the template's pages through SQLite's online backup, which other
connections to the store see as any other writer's change. The migrations add no rows but Alembic's
revision, so a copy is the store the runner would have left;
``tests/stacklens/control/test_control_template.py`` compares a copy with a store the runner migrated,
table by table and index by index, and the runner's own tests (``tests/stacklens/control/test_db.py``)
use the runner itself (:func:`runner_only`).

Only an empty SQLite file is copied into: a store with tables at an older revision (or none, or a half-made
one), PostgreSQL and in-memory stores go to the runner; a store already at the newest revision is left as
it is (Alembic would find nothing to do there; the runner's check for rows pointing at nothing after an
upgrade is tested by the runner's own tests). A PostgreSQL schema of a test's own that is not made yet is a
pooled one, emptied at the end of an earlier test (:func:`release_schema`, below), when one waits;
``tests/stacklens/control/test_control_template.py`` compares such a schema's catalog with one the runner
migrated."""

from __future__ import annotations

import atexit
import contextlib
import functools
import shutil
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url

from stacklens.settings import Settings

Runner = Callable[..., None]

_lock = threading.Lock()
_template: list[Path] = []  # the process's template file, once built
_runner_only = threading.Event()


@contextmanager
def runner_only() -> Iterator[None]:
    """Every control-store migration in this block is the runner's own (the tests of the runner)."""
    _runner_only.set()
    try:
        yield
    finally:
        _runner_only.clear()


def _sqlite_file(settings: Settings) -> Path | None:
    url = make_url(settings.resolved_database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database).expanduser()


def _is_empty(path: Path) -> bool:
    if not path.exists() or path.stat().st_size == 0:
        return True
    with closing(sqlite3.connect(path, timeout=10)) as connection:
        return not connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]


def _revision(path: Path) -> str | None:
    with closing(sqlite3.connect(path, timeout=10)) as connection:
        try:
            rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.OperationalError:  # no such table: never migrated
            return None
    return rows[0][0] if len(rows) == 1 else None


@functools.cache
def _head() -> str | None:
    """The shipped migrations' one head, read from their files as the product reads it (without Alembic)."""
    from stacklens.control.db import head_revisions

    heads = head_revisions()
    return next(iter(heads)) if len(heads) == 1 else None


def _build(runner: Runner, settings: Settings) -> Path:
    from stacklens.control.db import get_engine

    folder = tempfile.mkdtemp(prefix="control-template-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "control.db"
    template = settings.model_copy(update={"database_url": f"sqlite:///{path}"})
    runner(template)
    # Its pooled connections closed: the last one checkpoints the WAL into the file, which only copies read.
    get_engine(template).dispose()
    return path


def template_for(runner: Runner, settings: Settings) -> Path:
    """The process's template file, migrated by ``runner`` on first use."""
    with _lock:
        if not _template:
            _template.append(_build(runner, settings))
        return _template[0]


def copy_template(template: Path, target: Path) -> None:
    """Fill the empty store ``target`` with ``template``'s pages (SQLite's online backup)."""
    with (
        closing(sqlite3.connect(template, timeout=10)) as source,
        closing(sqlite3.connect(target, timeout=10)) as destination,
    ):
        source.backup(destination)


def copying(runner: Runner) -> Runner:
    """``runner`` (the control-store migration), copying the template into an empty SQLite store and taking a
    pooled schema for a PostgreSQL one not made yet (:func:`release_schema`)."""

    def migrate_control_store(settings: Settings) -> None:
        path = _sqlite_file(settings)
        if _runner_only.is_set():
            runner(settings)
            return
        if path is None:
            schema = _schema_of(settings)
            # A PostgreSQL schema of the test's own, not made yet: a pooled one renamed (below).
            if schema is not None and _absent_schema(settings, schema):
                if not _take_schema(settings, schema):
                    runner(settings)
                    _migrated_by_runner(settings, schema)
                return
            runner(settings)
            return
        if not _is_empty(path):
            # A store at the newest revision is left as the runner leaves it (Alembic finds nothing to do,
            # ~0.03-0.05 s of reading the revision files each time; tests call this once per organization).
            if _revision(path) != _head():
                runner(settings)
            return
        template = template_for(runner, settings)
        from stacklens.control.db import get_engine

        # The runner's engine makes the file (0600) and its folder before the copy.
        engine = get_engine(settings)
        copy_template(template, path)
        # As after the runner: the engine's pool holds a connection to the store, in WAL mode, so its -wal and
        # -shm files exist from now on (tests/api/test_private_files.py checks their modes while serving).
        with engine.connect():
            pass

    return functools.wraps(runner)(migrate_control_store)


# PostgreSQL: a test's schema (``tests/conftest.py``, ``control_settings``) is migrated by the runner, twenty
# revisions of DDL: ~0.5 s of this process's CPU and as much of the server's, each time. So a schema the
# copying runner migrated is not dropped when its test ends but emptied and kept (:func:`release_schema`) when
# it still has exactly the objects of the first schema the runner migrated in this process (its catalog, each
# definition as PostgreSQL prints it): the tables that hold rows emptied (:func:`_empty`), the sequences
# restarted, Alembic's revision kept, and the schema renamed into a small pool. The next empty schema the
# copying runner is asked to migrate is a pooled one renamed, after a check that its tables are still empty (a
# write from a thread its test left, whose transaction began before the rename, drops it). A schema keeps no
# name an earlier test's had: a connection that test left still points its search path at the old name, where
# nothing is any more.
PG_POOL_SIZE = 2
# Per server, the catalog of the first schema the runner migrated here (:data:`CATALOG`).
_pg_reference: dict[str, frozenset[tuple[str, str, str, str]]] = {}
_pg_built: set[str] = set()  # schemas the copying runner built (from the pool or by the runner)
_pg_pools: dict[str, list[str]] = {}  # per server: the emptied schemas waiting for a test
# Every object of a schema with its definition, as PostgreSQL prints it (with the search path at pg_catalog
# alone, so every name it prints is qualified by its schema, which :func:`_catalog` then leaves out).
CATALOG = """
SELECT 'class', c.relname, c.relkind::text, coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c WHERE c.relnamespace = CAST(:schema AS regnamespace)
UNION ALL
SELECT 'column', c.relname || '.' || a.attname,
       concat_ws(' ', a.attnum, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity, a.attgenerated,
                 coalesce(col_description(c.oid, a.attnum), '')),
       coalesce(pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relnamespace = CAST(:schema AS regnamespace) AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint', c.relname || '.' || k.conname, k.contype::text, pg_get_constraintdef(k.oid)
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid WHERE c.relnamespace = CAST(:schema AS regnamespace)
UNION ALL
SELECT 'index', i.relname, '', pg_get_indexdef(i.oid)
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE i.relnamespace = CAST(:schema AS regnamespace)
UNION ALL
SELECT 'sequence', c.relname, format_type(s.seqtypid, NULL),
       concat_ws(' ', s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcache, s.seqcycle)
FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = CAST(:schema AS regnamespace)
UNION ALL
SELECT 'type', t.typname, t.typtype::text,
       coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
                '')
FROM pg_type t WHERE t.typnamespace = CAST(:schema AS regnamespace) AND t.typrelid = 0 AND t.typelem = 0
UNION ALL
SELECT 'trigger', c.relname || '.' || g.tgname, '', pg_get_triggerdef(g.oid)
FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
WHERE c.relnamespace = CAST(:schema AS regnamespace) AND NOT g.tgisinternal
UNION ALL
SELECT 'function', p.oid::regprocedure::text, p.prokind::text, md5(p.prosrc)
FROM pg_proc p WHERE p.pronamespace = CAST(:schema AS regnamespace)
UNION ALL
SELECT 'view', c.relname, '', pg_get_viewdef(c.oid)
FROM pg_class c WHERE c.relnamespace = CAST(:schema AS regnamespace) AND c.relkind IN ('v', 'm')
"""


def _server(settings: Settings) -> str:
    """The PostgreSQL server and database of ``settings``' control store, without its options."""
    url = make_url(settings.resolved_database_url).difference_update_query(["options"])
    return url.render_as_string(hide_password=False)


def _schema_of(settings: Settings) -> str | None:
    """The schema of a PostgreSQL store's own (its search path's one schema, as the tests' URLs name it)."""
    from stacklens.control.db import search_path_schema

    url = make_url(settings.resolved_database_url)
    if url.get_backend_name() != "postgresql":
        return None
    return search_path_schema(settings.resolved_database_url)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _catalog(connection: Connection, schema: str) -> frozenset[tuple[str, str, str, str]]:
    connection.execute(text("SET LOCAL search_path = pg_catalog"))
    rows = connection.execute(text(CATALOG), {"schema": schema}).fetchall()
    names = (f"{_quoted(schema)}.", f"{schema}.")

    def plain(value: str) -> str:
        for name in names:
            value = value.replace(name, "")
        return value

    return frozenset((kind, plain(name), plain(what), plain(body)) for kind, name, what, body in rows)


def _tables(connection: Connection, schema: str) -> list[str]:
    return list(
        connection.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = :schema ORDER BY tablename"),
            {"schema": schema},
        ).scalars()
    )


def _filled(connection: Connection, schema: str, tables: list[str]) -> list[str]:
    """The tables of ``schema`` that hold rows, in one statement."""
    if not tables:
        return []
    probes = " UNION ALL ".join(
        f"SELECT {i} WHERE EXISTS (SELECT 1 FROM {_quoted(schema)}.{_quoted(name)})"  # noqa: S608 - quoted names
        for i, name in enumerate(tables)
    )
    return [tables[i] for i in connection.execute(text(probes)).scalars()]


def _take_schema(settings: Settings, schema: str) -> bool:
    """Rename a pooled schema of ``settings``' server to ``schema`` (not made yet): True when one was there
    and its tables were still empty but for Alembic's revision."""
    from stacklens.control.db import get_engine

    server = _server(settings)
    while True:
        with _lock:
            pool = _pg_pools.get(server)
            if not pool:
                return False
            pooled = pool.pop()
        with get_engine(settings).begin() as connection:
            connection.execute(text(f"ALTER SCHEMA {_quoted(pooled)} RENAME TO {_quoted(schema)}"))
            late = [
                t for t in _filled(connection, schema, _tables(connection, schema)) if t != "alembic_version"
            ]
        if late:
            with get_engine(settings).begin() as connection:
                connection.execute(text(f"DROP SCHEMA IF EXISTS {_quoted(schema)} CASCADE"))
            continue
        with _lock:
            _pg_built.add(schema)
        return True


def _migrated_by_runner(settings: Settings, schema: str) -> None:
    """A schema the runner just migrated from nothing: the process's reference catalog if it has none yet
    (when the runner left rows in no table but Alembic's), and a schema that may be pooled at its end."""
    from stacklens.control.db import get_engine

    server = _server(settings)
    with get_engine(settings).begin() as connection:
        if server not in _pg_reference:
            if _filled(connection, schema, _tables(connection, schema)) != ["alembic_version"]:
                return
            _pg_reference[server] = _catalog(connection, schema)
    with _lock:
        _pg_built.add(schema)


def _absent_schema(settings: Settings, schema: str) -> bool:
    from stacklens.control.db import get_engine

    with get_engine(settings).connect() as connection:
        found = connection.execute(
            text("SELECT 1 FROM pg_namespace WHERE nspname = :schema"), {"schema": schema}
        )
        return found.first() is None


def release_schema(settings: Settings, schema: str) -> None:
    """A test's PostgreSQL ``schema`` at its end: emptied into the pool when the copying runner built it, it
    still has the reference's objects and the pool has room; else dropped."""
    from stacklens.control.db import dispose_engines, get_engine

    # The test's pooled connections closed first: none of them holds a lock the emptying would wait for.
    dispose_engines()
    with contextlib.suppress(Exception):
        if _recycle_schema(settings, schema):
            return
    with get_engine(settings).begin() as connection:
        connection.execute(text(f"DROP SCHEMA IF EXISTS {_quoted(schema)} CASCADE"))
    dispose_engines()


def _recycle_schema(settings: Settings, schema: str) -> bool:
    from stacklens.control.db import dispose_engines, get_engine

    server = _server(settings)
    with _lock:
        if schema not in _pg_built or len(_pg_pools.get(server, ())) >= PG_POOL_SIZE:
            return False
        _pg_built.discard(schema)
        reference = _pg_reference.get(server)
    if reference is None:
        return False
    pooled = f"t_pool_{uuid.uuid4().hex[:12]}"
    try:
        with get_engine(settings).begin() as connection:
            # A lock a leftover connection holds makes the emptying give way to the drop (which waits).
            connection.execute(text("SET LOCAL lock_timeout = '5s'"))
            if _catalog(connection, schema) != reference:
                return False
            revision = list(
                connection.execute(text(f"SELECT version_num FROM {_quoted(schema)}.alembic_version"))  # noqa: S608
            )
            if [row[0] for row in revision] != [_head()]:
                return False
            tables = _tables(connection, schema)
            filled = [name for name in _filled(connection, schema, tables) if name != "alembic_version"]
            _empty(connection, schema, filled)
            # Every sequence as a fresh schema has it (not yet used), those of empty tables too.
            used = connection.execute(
                text(
                    "SELECT sequencename FROM pg_sequences WHERE schemaname = :schema AND last_value IS NOT NULL"
                ),
                {"schema": schema},
            ).scalars()
            for name in list(used):
                connection.execute(text(f"ALTER SEQUENCE {_quoted(schema)}.{_quoted(name)} RESTART"))
            connection.execute(text(f"ALTER SCHEMA {_quoted(schema)} RENAME TO {_quoted(pooled)}"))
    finally:
        dispose_engines()
    with _lock:
        _pg_pools.setdefault(server, []).append(pooled)
    return True


def _empty(connection: Connection, schema: str, filled: list[str]) -> None:
    """Delete the rows of ``filled``, the only tables of ``schema`` that hold any, with the foreign keys'
    checks off for this transaction (so in any order), and commit without waiting for the WAL's flush (a
    pooled schema needs no durability). A TRUNCATE … CASCADE of the same tables took 0.16-0.29 s a test here
    (it reaches every table that refers to them and gives each table and index new files), the emptying
    three quarters of a PostgreSQL test's teardown; the deletes of a test's few rows take a few ms. Turning
    the checks off needs a superuser, which the tests' server gives (trust authentication as ``postgres``);
    another role truncates as before."""
    if not filled:
        return
    names = [f"{_quoted(schema)}.{_quoted(name)}" for name in filled]
    connection.execute(text("SET LOCAL synchronous_commit = off"))
    if connection.execute(text("SELECT current_setting('is_superuser')")).scalar() != "on":
        connection.execute(text(f"TRUNCATE {', '.join(names)} RESTART IDENTITY CASCADE"))
        return
    connection.execute(text("SET LOCAL session_replication_role = replica"))
    for name in names:
        connection.execute(text(f"DELETE FROM {name}"))  # noqa: S608 - quoted names


@atexit.register
def _drop_pooled_schemas() -> None:
    """The pooled schemas go with the process (each test's schema did with its test)."""
    from sqlalchemy import create_engine

    for server, pool in list(_pg_pools.items()):
        if not pool:
            continue
        with contextlib.suppress(Exception):
            engine = create_engine(server)
            try:
                with engine.begin() as connection:
                    for name in pool:
                        connection.execute(text(f"DROP SCHEMA IF EXISTS {_quoted(name)} CASCADE"))
            finally:
                engine.dispose()
        pool.clear()
