"""Fixtures shared by every test folder.

The embedded ClickHouse engine (chdb) can open one data directory per process, so the whole pytest run
shares one warehouse path and each test gets its own database in it. Each test also gets its own data dir,
control store and settings. PostgreSQL and Redis tests use the machine's servers through
``STACKLENS_TEST_POSTGRES_URL`` / ``STACKLENS_TEST_REDIS_URL``; in CI (``CI=true``) a missing URL fails
the test instead of skipping it, so production-mode tests are never silently skipped there.
"""

from __future__ import annotations

import gc
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from clickhouse_connect.driver.client import Client

from stacklens.control import db as control_db
from stacklens.settings import Settings, override_settings
from stacklens.warehouse import migrations
from stacklens.warehouse.client import own_client
from tests import control_template, dagster_scripts, scheduling
from tests.browser import SharedChromium, lend, shared_chromium
from tests.warehouse_template import copying, release

# Fixtures any folder's tests ask for by name (a server, a client, the browser SDK's bundle): never imported.
pytest_plugins = ["tests.shared_fixtures"]

# Before any test module imports the runner by name: a fresh test database is a copy of one migrated once
# (tests/warehouse_template.py says when, and why).
migrations.apply_migrations = copying(migrations.apply_migrations)
# The same for a fresh SQLite control store (tests/control_template.py).
control_db.migrate_control_store = control_template.copying(control_db.migrate_control_store)
dagster_scripts.install()  # Dagster's storages read their revisions once a process (tests/dagster_scripts.py)

# A test's one-off request (``httpx.get``, ``httpx.post``, ...) waits up to a minute unless it names its
# own timeout. httpx's 5 s default is a latency goal no test states: on a slow two-core host a read that
# waits for the door's drain or a first warehouse read took longer, and the test failed for the machine,
# not the product. A test about a timeout passes its own, which these defaults never override; the
# product's calls all pass one.
TEST_REQUEST_TIMEOUT = httpx.Timeout(60.0)
# Each httpx client made without a ``verify`` builds a TLS context of its own and loads the CA bundle into it:
# 55-60 ms of CPU, for a one-off request to a server on 127.0.0.1 that never uses it (11 % of the API tests'
# CPU went there). Every such client of the test process shares one context, made by httpx with the same
# defaults; a test or a product call that passes its own ``verify`` keeps it.
TEST_TLS_CONTEXT = httpx.create_ssl_context()
_ONE_OFF = (
    httpx.request,
    httpx.get,
    httpx.post,
    httpx.put,
    httpx.patch,
    httpx.delete,
    httpx.head,
    httpx.options,
)
for _verb in (*_ONE_OFF, httpx.stream.__wrapped__):  # type: ignore[attr-defined]
    _verb.__kwdefaults__.update(timeout=TEST_REQUEST_TIMEOUT, verify=TEST_TLS_CONTEXT)
for _client_init in (httpx.Client.__init__, httpx.AsyncClient.__init__):
    _client_init.__kwdefaults__["verify"] = TEST_TLS_CONTEXT

if TYPE_CHECKING:
    from playwright.sync_api import Browser

TEST_SECRET = "test-secret-key-0123456789abcdef"
# The password of the owners `org_factory` makes.
PASSWORD = "password-123"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to test compiled ingest modules older than their source (the edit would not be tested)."""
    from stacklens.ingest.compiled import stale_modules

    stale = stale_modules(Path(__file__).resolve().parent.parent)
    if stale:
        pytest.exit(
            f"compiled modules older than their source: {', '.join(stale)}; "
            "rebuild them with `make install-dev` (or `.venv/bin/pip install -e .`)",
            returncode=4,
        )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="write each file's seconds into tests/durations.json (the order of `make test`, tests/scheduling.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # The controller (or the only process) records: under pytest-xdist it receives every worker's reports.
    if config.getoption("--record-durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(scheduling.DurationRecorder(), "stacklens-durations")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Whole files, the longest first by their recorded durations (``tests/scheduling.py``), each file's tests
    in their order.

    Two workers (``make test``) take whole files in this order; a minute-long file started last would keep
    one worker busy while the other has finished (the SDK's end-to-end files came last alphabetically).
    """
    scheduling.longest_files_first(items, scheduling.recorded())


def pytest_collection_finish(session: pytest.Session) -> None:
    """Set aside every object alive once the tests are collected, as `stacklens serve` does once its app is
    built (stacklens/cli/heap.py): the modules, the test items and the libraries they imported (~600,000
    objects in a worker) were walked again by each of the collector's older passes, ~175 ms each, 4-5 % of a
    worker's CPU. Cycles the tests make are still collected."""
    gc.collect()
    gc.freeze()


def _require_env(name: str) -> str:
    value = os.environ.get(name)
    if value:
        return value
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{name} is not set in CI; `make test` sets it when the server answers")
    pytest.skip(f"{name} not set (run through `make test` to use the machine's server)")


_anchors: dict[str, Client] = {}


@pytest.fixture(scope="session")
def warehouse_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The one chdb data directory of this test process, held open by one client for the whole run.

    The engine starts when a process opens its first client and stops when the last one closes, and a start
    loads every table of the directory: once a run had made a few hundred test databases, each test's first
    client took 15-20 s to open. Held open, a client opens in milliseconds; each test's database is dropped
    when the test ends (``settings``), so the engine holds only the tests in flight."""
    url = f"chdb://{tmp_path_factory.mktemp('chdb') / 'warehouse'}"
    _anchors[url] = own_client(url, "default")
    try:
        yield url
    finally:
        _anchors.pop(url).close()


def _drop_test_database(settings: Settings) -> None:
    anchor = _anchors.get(str(settings.warehouse_url))
    if anchor is None:
        return
    release(anchor, settings.warehouse_database)


@pytest.fixture
def postgres_url() -> str:
    return _require_env("STACKLENS_TEST_POSTGRES_URL")


def worker_redis_url(url: str) -> str:
    """``url`` (the machine's Redis) in a database of this pytest worker's own: under ``make test``'s
    workers each has control stores that number organizations and keys from 1, so two workers' tests would
    otherwise share Redis keys such as an ``org 1`` bucket. Worker ``gwN`` takes database D - N of the URL's D
    (``make test``'s 15: 15, 14 and 13)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return url
    base, _, db = url.rpartition("/")
    return f"{base}/{(int(db or 0) - int(worker[2:])) % 16}"


_emptied: set[str] = set()


def emptied_once(url: str) -> str:
    """``url``, its database emptied the first time this process asks for it. A run's tests must not meet an
    earlier run's keys: Redis outlives a run (CI runs on the machine the session left), and the keys of two
    runs can match — the rate limits' installation is named by its control store's path, which repeats when
    pytest's numbered temporary folders do, a control store numbers projects from 1, and a spike-protection
    history lives an hour (a project that met an earlier run's history is held to a higher rate)."""
    if url not in _emptied:
        import redis

        redis.Redis.from_url(url).flushdb()
        _emptied.add(url)
    return url


@pytest.fixture
def redis_url() -> str:
    return emptied_once(worker_redis_url(_require_env("STACKLENS_TEST_REDIS_URL")))


def postgres_schema_url(base_url: str) -> tuple[str, str]:
    """A URL whose connections use a fresh schema, so tests on one database never see each other."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options=-csearch_path%3D{schema}", schema


def make_settings(data_dir: Path, warehouse_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": data_dir,
        "warehouse_url": warehouse_url,
        "warehouse_database": f"t_{uuid.uuid4().hex[:12]}",
        "database_url": f"sqlite:///{data_dir / 'control.db'}",
        "secret_key": TEST_SECRET,
        "run_schedules": False,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def settings(tmp_path: Path, warehouse_url: str) -> Iterator[Settings]:
    """Fresh settings for one test (own data dir, warehouse database and SQLite control store)."""
    current = make_settings(tmp_path / "data", warehouse_url)
    current.data_dir.mkdir(parents=True, exist_ok=True)
    override_settings(current)
    try:
        yield current
    finally:
        override_settings(None)
        from stacklens.control.keys.use_tally import flush_all
        from stacklens.ingest.front_door import close_front_doors
        from stacklens.warehouse.client import reset_clients

        # The test's spooled rows and key-use counts are written now, not by a thread after its stores are
        # gone.
        close_front_doors()
        flush_all()
        reset_clients(keep=("default",))  # the warehouse's admin client serves the next test too
        _drop_test_database(current)


@pytest.fixture(params=["sqlite", "postgres"])
def control_settings(request: pytest.FixtureRequest, settings: Settings) -> Iterator[Settings]:
    """``settings`` with a migrated control store, once on SQLite and once on PostgreSQL (a fresh schema)."""
    from stacklens.control.db import dispose_engines, migrate_control_store

    current, schema = settings, None
    if request.param == "postgres":
        url, schema = postgres_schema_url(request.getfixturevalue("postgres_url"))
        current = settings.model_copy(update={"database_url": url})
        override_settings(current)
    migrate_control_store(current)
    try:
        yield current
    finally:
        from stacklens.control.keys.use_tally import flush_all

        flush_all()  # the test's key-use counts, written before its schema goes
        if schema is not None:
            control_template.release_schema(current, schema)  # emptied for the next test's schema, or dropped
        dispose_engines()


@pytest.fixture
def make_org(settings: Settings):
    """Factory: ``make_org("Acme")`` → dict(org_id, api_key, project, project_id, app_key) in the current
    settings' control store (migrated on first use); :func:`create_org` makes it."""
    from stacklens.control.db import migrate_control_store
    from stacklens.settings import get_settings

    def make(name: str = "Acme", project: str = "Web App", email: str | None = None) -> dict[str, object]:
        current = get_settings()
        migrate_control_store(current)
        return create_org(current, name, project, email)

    return make


@pytest.fixture(scope="session")
def _shared_chromium() -> Iterator[SharedChromium]:
    """One chromium per test process (per ``make test`` worker), started by the first test that asks."""
    with shared_chromium() as shared:
        yield shared


@pytest.fixture
def chromium(_shared_chromium: SharedChromium) -> Iterator[Browser]:
    """Debian's chromium (``tests/browser.py``: ``launch``), shared by the process's tests: starting
    Playwright's driver and a browser costs ~0.6 s on a quiet machine and a few seconds on a loaded one, paid
    by every browser test that launched its own. The contexts and pages a test opens are closed after it."""
    with lend(_shared_chromium) as browser:
        yield browser


@pytest.fixture
def stores(settings: Settings) -> Settings:
    """``settings`` with both stores migrated (the control store and the warehouse database)."""
    from stacklens.control.db import migrate_control_store
    from stacklens.warehouse.migrations import apply_migrations

    migrate_control_store(settings)
    apply_migrations(settings)
    return settings


def create_org(
    settings: Settings, name: str = "Acme", project: str = "Web App", email: str | None = None
) -> dict[str, Any]:
    """An organization with an owner and a project in ``settings``' control store, as the dict
    ``org_factory`` answers (also tests/module_stores.py's)."""
    from stacklens.control import accounts
    from stacklens.control.db import session_scope
    from stacklens.control.projects import create_project

    email = email or f"owner-{uuid.uuid4().hex[:8]}@example.test"
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(session, name, email, PASSWORD)
        created, app_key = create_project(session, org.id, project)
        return {
            "org_id": org.id,
            "org_slug": org.slug,
            "email": email,
            "api_key": api_key,
            "project": created.slug,
            "project_id": created.id,
            "app_key": app_key,
        }


@pytest.fixture
def org_factory(stores: Settings):
    """``org_factory("Acme")`` → dict(org_id, org_slug, email, api_key, project, project_id, app_key)."""

    def make(name: str = "Acme", project: str = "Web App") -> dict[str, Any]:
        return create_org(stores, name, project)

    return make


@pytest.fixture(scope="session", autouse=True)
def _cheap_password_hashes() -> Iterator[None]:
    """Passwords hashed by this process use argon2id at its lowest cost (one pass over 64 KiB).

    The product's parameters (64 MiB, three passes) cost ~0.1-0.2 s per hash and per sign-in on this
    machine's cores, and the suite creates and signs in thousands of users: that was minutes of a run spent
    in the hash. Hashes carry their parameters, so a server started in another process still verifies them
    (and rehashes at its own cost on the next sign-in, as it would after a parameter change).
    ``tests/stacklens/control/test_accounts.py`` checks the product's own parameters.
    """
    from argon2 import PasswordHasher

    from stacklens.control import accounts

    product = accounts._hasher, accounts._DUMMY_HASH
    accounts._hasher = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    accounts._DUMMY_HASH = accounts._hasher.hash("stacklens-no-such-user")
    yield
    accounts._hasher, accounts._DUMMY_HASH = product


@pytest.fixture(autouse=True)
def _fresh_sentry() -> Iterator[None]:
    """Every test starts without a sentry-sdk client or scope data and leaves none behind.

    sentry-sdk's scopes are process-wide: a tag one test's app sets (the demo shop's middleware, an SDK
    ``init`` with a per-service key) would otherwise ride on every event a later test captures.
    """
    yield
    import sentry_sdk

    sentry_sdk.get_client().close(timeout=2)
    for scope in (
        sentry_sdk.get_isolation_scope(),
        sentry_sdk.get_current_scope(),
        sentry_sdk.get_global_scope(),
    ):
        scope.clear()
        # No client: nothing is captured after the test. (``sentry_sdk.init()`` made an inactive one, ~60 ms
        # of every test: it walks the default integrations and asks git for a release.)
        scope.set_client(None)


@pytest.fixture(scope="module", autouse=True)
def _no_schedules_thread_left() -> Iterator[None]:
    """A module leaves no pipeline runner ticking and no front door open after its own fixtures are gone.

    A runner whose server fixture failed half-way keeps its "stacklens-schedules" thread alive: it ticks
    against a warehouse database the next module's fixtures dropped, and it opens Dagster instances (Alembic,
    whose context is module-wide) while a later test migrates a store, the one race that made whole runs fail
    with ``KeyError: 'script'``. Only threads started during this module are stopped; this fixture is set up
    first and so torn down last, after the module's own fixtures stopped what they started.
    """
    before = set(threading.enumerate())
    yield
    for thread in set(threading.enumerate()) - before:
        # A runner's thread runs its bound ``_loop``: the runner is the method's ``__self__``.
        runner = getattr(getattr(thread, "_target", None), "__self__", None)
        if thread.name == "stacklens-schedules" and runner is not None:
            runner.stop(timeout=30)
    # Nor a front door: a module's own stores (a module-scoped server's) leave theirs open, and the last
    # module's drained only at the interpreter's exit, after its warehouse directory was removed.
    from stacklens.ingest.front_door import close_front_doors

    close_front_doors()
