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
them: the tables that hold rows are truncated, the template's own rows written again where they changed, and
the database renamed into a small pool. The next fresh database of the same template is a pooled one renamed
(:func:`copying`), after a check that it holds the template's rows and nothing else; a database a test
altered, added to or dropped from is dropped, as before. A database never takes a name an earlier test's
had (which would spare its views' remaking): a thread that test left could still write under the name, and
caches keyed by it would carry over; a run that reused names saw another test's rows in a fresh database."""

from __future__ import annotations

import contextlib
import functools
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

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
# Databases built from a template (by name), and each template's emptied databases waiting for a test.
_built: dict[str, Template] = {}
_pools: dict[str, list[str]] = {}
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


def copy_template(template: Template, settings: Settings) -> list[str]:
    """Build ``settings``' database from ``template`` (a pooled one renamed, else copied); what the runner
    would have returned."""
    admin = warehouse_client(settings.resolved_warehouse_url, "default")
    target = settings.warehouse_database
    if _take_pooled(admin, template, target):
        return list(template.applied)
    ensure_database(settings)
    for statement in template.creates:
        admin.command(statement.replace(f"{template.database}.", f"{target}."))
    for table in template.filled:
        admin.command(
            "INSERT INTO {db:Identifier}.{t:Identifier} SELECT * FROM {source:Identifier}.{t:Identifier}",
            parameters={"db": target, "t": table, "source": template.database},
        )
    with _lock:
        _built[target] = template
    return list(template.applied)


def _take_pooled(admin: Any, template: Template, target: str) -> bool:
    """Rename a pooled database of ``template`` to ``target`` (an empty database or none): True when one was
    there and still empty but for the template's own tables (a write that came after it was emptied, from a
    thread its test left, drops it)."""
    while True:
        with _lock:
            pool = _pools.get(template.database)
            if not pool:
                return False
            pooled = pool.pop()
        rows = admin.query(
            "SELECT name, total_rows FROM system.tables WHERE database = {db:String}",
            parameters={"db": pooled},
        ).result_rows
        if not any(total for name, total in rows if name not in template.filled):
            admin.command("DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": target})
            admin.command(
                "RENAME DATABASE {old:Identifier} TO {new:Identifier}",
                parameters={"old": pooled, "new": target},
            )
            # A view keeps the database name it was made with: an insert into the renamed database's tables
            # would reach no materialized view. Made again under the new name (a few ms each, no rows).
            for name in template.views:
                admin.command(
                    "DROP VIEW {db:Identifier}.{v:Identifier}", parameters={"db": target, "v": name}
                )
            for statement in template.creates[len(template.creates) - len(template.views) :]:
                admin.command(statement.replace(f"{template.database}.", f"{target}."))
            with _lock:
                _built[target] = template
            return True
        admin.command("DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": pooled})


def recycle(admin: Any, database: str) -> bool:
    """Empty ``database`` (a test's, at its end) into its template's pool: True when it was built from a
    template, still has exactly the template's objects as the template made them, and the pool had room;
    False when the caller should drop it."""
    with _lock:
        template = _built.pop(database, None)
        if template is None or len(_pools.get(template.database, ())) >= POOL_SIZE:
            return False
    objects = _objects(admin, database)
    if frozenset((name, engine, digest) for name, engine, _, digest in objects) != template.shape:
        return False
    # The template's own rows are written again even when their count is unchanged: a replacing table's
    # rows can change and merge back to the same count.
    for name, _, total, _ in objects:
        if not total and name not in template.filled:
            continue
        admin.command("TRUNCATE TABLE {db:Identifier}.{t:Identifier}", parameters={"db": database, "t": name})
        if name in template.filled:
            admin.command(
                "INSERT INTO {db:Identifier}.{t:Identifier} SELECT * FROM {source:Identifier}.{t:Identifier}",
                parameters={"db": database, "t": name, "source": template.database},
            )
    pooled = f"t_pool_{uuid.uuid4().hex[:12]}"
    admin.command(
        "RENAME DATABASE {old:Identifier} TO {new:Identifier}", parameters={"old": database, "new": pooled}
    )
    with _lock:
        _pools.setdefault(template.database, []).append(pooled)
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
