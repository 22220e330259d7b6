"""`stacklens serve [--host] [--port]`: migrate, then run the API and dashboards in this process.

One process owns the embedded warehouse (chdb locks its data directory), so the server runs one uvicorn
worker; scale out with a ClickHouse server, PostgreSQL and Redis and several `stacklens serve` behind a
load balancer.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from stacklens.c_allocator import tune_allocator
from stacklens.cli.heap import FreedMemoryReleaser, settle_heap
from stacklens.listen import base_url, check_port_free
from stacklens.public_url import WILDCARD_HOSTS, serving
from stacklens.settings import Settings, get_settings

logger = logging.getLogger(__name__)


def migrate_all(settings: Settings) -> list[str]:
    """Bring the control store and the warehouse up to date; the warehouse's applied migrations are
    returned."""
    from stacklens.cli.main import CliError
    from stacklens.control.db import ControlStoreError, migrate_control_store

    try:
        migrate_control_store(settings)
    except ControlStoreError as exc:
        raise CliError(str(exc)) from exc
    # Imported late: commands that only touch the control store never load the warehouse code.
    from stacklens.warehouse.migrations import MigrationError, apply_migrations

    try:
        return apply_migrations(settings)
    except MigrationError as exc:
        raise CliError(str(exc)) from exc


def uvicorn_config(app: Any, host: str, port: int) -> Any:
    """uvicorn's settings: no ``Server: uvicorn`` header (it tells an attacker what to look up), and no
    uvicorn proxy-header handling: the app's own middleware believes forwarded headers only from
    ``STACKLENS_TRUSTED_PROXIES`` (api/proxy.py)."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        proxy_headers=False,
        server_header=False,
        access_log=False,
    )


# Threads that run the API's and dashboards' synchronous handlers (anyio's default is 40). Each one mostly
# waits for the warehouse, and the embedded engine runs one query per client at a time (two clients): beyond a
# few, more threads only queue there, holding a stack each. 8 still keep a slow page or a pipeline run started
# over `/api/pipelines/run` from blocking the ingest and the health check.
WORKER_THREADS = 8


def server_for(config: Any) -> Any:
    """A ``uvicorn.Server`` whose event loop runs synchronous handlers on at most :data:`WORKER_THREADS`
    threads (the limiter belongs to the loop, so it is set once the loop runs)."""
    import anyio.to_thread
    import uvicorn

    class BoundedServer(uvicorn.Server):
        async def startup(self, sockets: list[Any] | None = None) -> None:
            anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
            await super().startup(sockets)

    return BoundedServer(config)


def warehouse_kind(settings: Settings) -> str:
    """What the warehouse is, for the startup line: the embedded engine's directory or the server's address
    (never its credentials)."""
    url = settings.resolved_warehouse_url
    if settings.embedded_warehouse:
        return f"embedded ClickHouse (chdb) in {url[len('chdb://') :]}"
    parts = urlsplit(url)
    address = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    return f"ClickHouse server at {parts.scheme}://{address}, database {settings.warehouse_database}"


def log_startup(settings: Settings, host: str, port: int) -> None:
    """The operator's first line: where the service answers, where its state lives, which warehouse."""
    logger.info(
        "StackLens is serving on %s (API docs: /docs); listening on %s:%d, data dir %s, warehouse: %s",
        base_url(settings, host, port),
        host,
        port,
        settings.data_dir,
        warehouse_kind(settings),
    )
    if host in WILDCARD_HOSTS and not settings.public_url:
        logger.warning(
            "listening on every interface: links in alerts, share links and DSNs point at %s; set "
            "STACKLENS_PUBLIC_URL to the address people and SDKs use",
            base_url(settings, host, port),
        )


def run_server(settings: Settings, host: str, port: int) -> int:
    """Serve until interrupted (the caller has migrated)."""
    from stacklens.cli.app import build_app
    from stacklens.ingest.stored_key_index import own_warehouse
    from stacklens.warehouse.engine import release_start_pages

    check_port_free(host, port)
    tune_allocator()  # before the server's threads: each would get an arena of its own (stacklens/c_allocator.py)
    # Links (alerts, share links, DSNs) point at the address bound here, unless STACKLENS_PUBLIC_URL is set;
    # the app and the in-process pipeline runs get these settings.
    settings = serving(settings, host, port)
    app = build_app(settings)
    log_startup(settings, host, port)
    settle_heap()  # the app is built: what it holds is set aside from the collector (stacklens/cli/heap.py)
    # The engine has started and migrated: the pages of its library only the start ran are given back.
    released = release_start_pages()
    if released:
        logger.info("warehouse: %d MiB of the engine's start-up code unmapped", released // 1024)
    # The embedded engine is this process's alone: the front door may trust its index of stored keys.
    own_warehouse(settings)
    server = server_for(uvicorn_config(app, host, port))
    # uvicorn re-raises SIGTERM after its graceful shutdown; with the default action the process would end
    # there, before the schedules thread is stopped and the pipelines token removed. Turn it into an exit.
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        with (
            serve_pipelines(settings, app, host, port),
            ingest_workers(settings),
            self_watch(settings),
            retention_schedule(settings),
            freed_memory_released(settings),
        ):
            server.run()
    except _Terminated:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0 if server.started else 1


class _Terminated(Exception):  # a control-flow signal, not an error
    """SIGTERM arrived after the server shut down."""


def _exit_on_sigterm(_signum: int, _frame: object) -> None:
    raise _Terminated


@contextlib.contextmanager
def ingest_workers(settings: Settings) -> Iterator[None]:
    """Recover the front door's spool while serving; stop the front doors and the ingest worker processes
    at shutdown. The workers are not started here: the first large batch starts them, and they stop when no
    large batch came for a while (stacklens/ingest/workers.py) — most installations never send one."""
    from stacklens.ingest.front_door import close_front_doors, recover_and_index
    from stacklens.ingest.workers import close_pools

    # Rows a stopped server left in the front door's spool land before anything else; then the stored keys
    # are indexed where this process owns the warehouse (run_server).
    threading.Thread(
        target=_recover_then_release,
        args=(settings, recover_and_index),
        name="front-door-recover",
        daemon=True,
    ).start()
    try:
        yield
    finally:
        close_front_doors()
        close_pools()


def _recover_then_release(settings: Settings, recover: Callable[[Settings], None]) -> None:
    """The front door's start-up recovery and index, then the release of the engine library's pages their
    statements mapped (~60 MiB, once, right after the start's own release): they run once per start."""
    from stacklens.warehouse.engine import release_library_pages

    try:
        recover(settings)
    finally:
        release_library_pages()


@contextlib.contextmanager
def self_watch(settings: Settings) -> Iterator[None]:
    """Watch ingest for the operators while serving: refusals (disk, queue) and accepted rows not landing
    alert every organization's owners once per episode (stacklens/self_watch)."""
    from stacklens.self_watch.watcher import watching

    with watching(settings):
        yield


# The embedded engine's allocator is purged this often (stacklens.warehouse.client.purge_engine_memory): a
# large insert or pipeline run leaves hundreds of MiB of freed pages in it, and the sooner they go back the
# lower the peak under a backfill; a purge costs ~1 ms when little was freed.
ENGINE_PURGE_SECONDS = 5.0


@contextlib.contextmanager
def freed_memory_released(settings: Settings) -> Iterator[None]:
    """Give the C allocator's freed blocks back to the system every half minute while serving, and unmap the
    engine library's pages the statements of that half minute mapped (stacklens/warehouse/engine.py); give
    the embedded engine's freed memory back every few seconds."""
    from stacklens.warehouse.engine import release_library_pages

    releaser = FreedMemoryReleaser(
        also=release_library_pages,
        often=lambda: purge_engine_memory_quietly(settings),
        often_every=ENGINE_PURGE_SECONDS,
    )
    releaser.start()
    try:
        yield
    finally:
        releaser.stop()


def purge_engine_memory_quietly(settings: Settings) -> bool:
    """:func:`~stacklens.warehouse.client.purge_engine_memory`, a failure logged (a warehouse being stopped):
    the next beat tries again. A beat that purged (the warehouse had calls since the last one) also gives
    back what the service's own allocations freed and unmaps the engine library's pages the beat's statements
    mapped (stacklens/warehouse/engine.py): each statement maps ~50-150 MiB of them, mostly code the next
    statement of a pipeline run or a drain does not run, and held for half a minute they piled up to ~250 MiB
    while the history built. Mapping back the code the next statement runs costs a few milliseconds, within
    the noise of a statement's 70-100 ms (measured with an insert and a grouped select). A quiet warehouse
    is not purged, so an idle server does nothing on this beat."""
    from stacklens.c_allocator import release_freed_memory
    from stacklens.warehouse.client import purge_engine_memory
    from stacklens.warehouse.engine import release_library_pages

    try:
        purged = purge_engine_memory(settings)
    except Exception as exc:  # noqa: BLE001 - memory is given back at the next beat; serving goes on
        logger.debug("warehouse: the engine's freed memory was not purged (%s)", exc)
        return False
    if purged:
        release_freed_memory()
        release_library_pages()
    return purged


@contextlib.contextmanager
def retention_schedule(settings: Settings) -> Iterator[None]:
    """Apply retention and event caps daily at STACKLENS_RETENTION_RUN_AT while serving
    (stacklens/operations/retention_schedule.py)."""
    from stacklens.operations.retention_schedule import RetentionScheduler, run_at

    scheduler = RetentionScheduler(settings)
    if run_at(settings) is not None:
        scheduler.start()
    try:
        yield
    finally:
        scheduler.stop()


# Hidden (not a setting, not in the operator docs): the seconds between the schedules thread's start-up
# catch-up passes, for the tests that watch a real `stacklens serve` (a restart's detection passes, marts
# filling after an ingest); with the default 10 s they waited for passes, not for work. The thread then polls
# at least as often, since a pass can only start when it wakes. Unset: the runner's defaults.
CATCH_UP_INTERVAL_ENV = "STACKLENS_PIPELINES_CATCH_UP_INTERVAL"


def catch_up_interval(environ: Mapping[str, str] = os.environ) -> float | None:
    """The seconds :data:`CATCH_UP_INTERVAL_ENV` sets (a positive number), else None (the default)."""
    raw = environ.get(CATCH_UP_INTERVAL_ENV, "").strip()
    if not raw:
        return None
    try:
        interval = float(raw)
    except ValueError:
        interval = 0.0  # refused below, with the variable's name
    if not interval > 0:
        raise ValueError(f"{CATCH_UP_INTERVAL_ENV} must be a positive number of seconds, not {raw!r}")
    return interval


@contextlib.contextmanager
def serve_pipelines(settings: Settings, app: Any, host: str, port: int) -> Iterator[None]:
    """Run the schedules in-process while serving (STACKLENS_RUN_SCHEDULES) and open the local pipelines
    endpoint to `stacklens pipelines` (token in ``<data_dir>/pipelines_token``); stop both at shutdown."""
    from pipelines.runner import EmbeddedRunner
    from stacklens.server_link import local_url, remove_link, write_link

    interval = catch_up_interval()
    runner = (
        EmbeddedRunner(settings)
        if interval is None
        else EmbeddedRunner(settings, poll_seconds=min(interval, 5.0), catch_up_interval=interval)
    )
    token = write_link(settings, local_url(host, port))
    app.state.pipelines_runner = runner
    app.state.pipelines_token = token
    if settings.run_schedules:
        runner.start()
        logger.info("pipelines: schedules run in this process (runs recorded in %s)", settings.dagster_home)
    try:
        yield
    finally:
        app.state.pipelines_token = None
        remove_link(settings, token)
        if not runner.stop():
            logger.warning("pipelines: a run was still in progress at shutdown")


def _run(args: argparse.Namespace) -> int:
    settings = get_settings()
    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
    check_port_free(host, port)
    if getattr(args, "no_migrate", False):
        logger.info(
            "migrations: not applied here (--no-migrate; `stacklens migrate` brings the stores up to date)"
        )
    else:
        for name in migrate_all(settings):
            logger.info("warehouse: applied %s", name)
    return run_server(settings, host, port)


def add_listen_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=None, help="address to listen on (default STACKLENS_HOST, 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=None, help="port (default STACKLENS_PORT, 8000)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve", help="migrate, then serve the API and dashboards", description=__doc__.splitlines()[0]
    )
    add_listen_arguments(parser)
    parser.add_argument(
        "--no-migrate",
        action="store_true",
        help="serve without applying migrations first: for the API workers of a scaled installation, where "
        "`stacklens migrate` runs once per upgrade instead of in every worker at once",
    )
    parser.set_defaults(func=_run)
