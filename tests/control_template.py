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
upgrade is tested by the runner's own tests)."""

from __future__ import annotations

import atexit
import functools
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from sqlalchemy.engine import make_url

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
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from stacklens.control.db import MIGRATIONS_DIR

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(config).get_current_head()


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
    """``runner`` (the control-store migration), copying the template into an empty SQLite store."""

    def migrate_control_store(settings: Settings) -> None:
        path = _sqlite_file(settings)
        if _runner_only.is_set() or path is None:
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
