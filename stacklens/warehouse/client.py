"""Build warehouse clients from the settings' URL: embedded chdb or a ClickHouse server, one code path.

``chdb://<path>`` opens ClickHouse's engine in this process (clickhouse-connect's chdb backend); the engine
locks its data directory, so only one process may own it. ``http(s)://user:pass@host:8123`` talks to a
server. Nothing else in the code base looks at the URL's scheme.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Collection, Iterator
from typing import Any
from urllib.parse import urlsplit

import clickhouse_connect
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.blocking import may_block
from stacklens.errors import StackLensError, Unavailable
from stacklens.settings import Settings
from stacklens.warehouse.calls import marked, purge_beats, uncounted
from stacklens.warehouse.engine import ENGINE_SERVER_SETTINGS, start_embedded_engine


class WarehouseUnavailable(Unavailable, RuntimeError):
    """The warehouse cannot be reached or opened; the message says what to do."""


class WarehouseBusy(WarehouseUnavailable):
    """The embedded warehouse's data directory is open in another process."""


# `stacklens backup` writes the warehouse with the engine's own BACKUP … TO File('<DIR>/warehouse'), refused
# unless the path lies under `backups.allowed_path`. The operator names any directory, so the whole file
# system is allowed; only the service's own code issues BACKUP/RESTORE (operator SQL runs readonly=1, which
# refuses both, and analysts' queries are built by the service).
ENGINE_CONNECTION_SETTINGS = {**ENGINE_SERVER_SETTINGS, "backups.allowed_path": "/"}

_lock = threading.Lock()
_stderr_swap = threading.Lock()
_clients: dict[tuple[str, str], Client] = {}
# The clients open_client made on the embedded engine (give_back_engine_memory purges only through these).
_embedded_clients: weakref.WeakSet[Client] = weakref.WeakSet()
# Per shared client, a second client of the same warehouse and database (second_client): each client runs one
# query at a time, so two independent reads of one view can only overlap on two clients.
_seconds: dict[tuple[str, str], Client] = {}
# Per warehouse and database, the client the front door inserts with (inserting_client).
_inserters: dict[tuple[str, str], Client] = {}
# Per warehouse and database, analyst clients idle between questions (analyst_client): as many as the
# analysts' lane runs at once on a small host, and one more for a question beside it.
ANALYST_IDLE_CLIENTS = 2
_analysts: dict[tuple[str, str], list[Client]] = {}


@contextlib.contextmanager
def _engine_stderr_held() -> Iterator[None]:
    """Hold what the embedded engine writes to file descriptor 2 while it opens, and pass it on only if the
    open succeeds: on a locked data directory the C++ engine prints its own multi-line exception there,
    beside the one-line message this module raises (which says what to do)."""
    sys.stderr.flush()
    # One at a time: two overlapping swaps of descriptor 2 could restore each other's temporary file.
    with _stderr_swap, tempfile.TemporaryFile() as held:
        saved = os.dup(2)
        opened = False
        os.dup2(held.fileno(), 2)
        try:
            yield
            opened = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if opened:
                held.seek(0)
                os.write(2, held.read())


def _summary_reads_storage() -> None:
    """Make an embedded query's summary say what a server's does: ``read_rows`` / ``read_bytes`` are the
    rows and bytes the engine read from its tables. clickhouse-connect's chdb backend (1.12) fills them
    from the chdb result's ``rows_read()`` / ``bytes_read()``, which count the rows of the answer (a count
    over a million rows reads "1"); the figures read from storage are ``storage_rows_read()`` /
    ``storage_bytes_read()``. Explore's ``meta.rows_read`` is this summary's ``read_rows``. Applied once,
    to the backend class, before the first embedded client opens (the backend's module imports the engine:
    only after start_embedded_engine); a chdb result without those methods keeps the backend's own summary."""
    from clickhouse_connect.driver._backend import chdb_backend

    backend = getattr(chdb_backend, "ChdbBackend", None)
    original = getattr(backend, "_summary", None)
    if backend is None or original is None or getattr(original, "reads_storage", False):
        return

    def summary(result: Any) -> dict[str, Any]:
        out: dict[str, Any] = original(result)
        with contextlib.suppress(AttributeError, TypeError, RuntimeError):
            out = {
                **out,
                "read_rows": str(int(result.storage_rows_read())),
                "read_bytes": str(int(result.storage_bytes_read())),
            }
        return out

    summary.reads_storage = True  # type: ignore[attr-defined]  # marks the replacement: applied once
    backend._summary = staticmethod(summary)


def _no_pandas_probe() -> None:
    """Tell clickhouse-connect that pandas is absent unless something already loaded it. Its first insert asks
    whether the rows are a pandas DataFrame, and to ask it imports pandas (~55 MiB resident, 0.7 s of CPU):
    the service's inserts are lists of columns, never DataFrames, and no other part of the server uses
    pandas (the explore downloads build Arrow arrays with polars), so the server would hold it for that
    question alone. Where pandas is loaded already (a notebook, a test), clickhouse-connect resolves it as
    it would."""
    from clickhouse_connect.driver import options

    if "pd" in vars(options) or "pandas" in sys.modules:
        return
    options.pd = None
    options.pd_time_test = None


def open_client(url: str, database: str | None) -> Client:
    # Opening a client is a connection (or the embedded engine's start): never on the event loop either.
    may_block("opening a warehouse client")
    _no_pandas_probe()
    scheme = urlsplit(url).scheme
    try:
        if scheme == "chdb":
            with _engine_stderr_held():
                start_embedded_engine()
                _summary_reads_storage()
                # The same settings again for this connection's server context: the pools that context
                # creates later (merges and their CPU priority) read them from there.
                client = marked(
                    clickhouse_connect.get_client(
                        dsn=url, database=database or "default", chdb_options=ENGINE_CONNECTION_SETTINGS
                    )
                )
                _embedded_clients.add(client)
                return client
        if scheme in ("http", "https", "clickhouse", "clickhouses"):
            return marked(clickhouse_connect.get_client(dsn=url, database=database or "default"))
    except ClickHouseError as exc:
        text = str(exc)
        if scheme == "chdb" and ("EmbeddedServer" in text or "Unable to open the chdb engine" in text):
            raise WarehouseBusy(
                f"the embedded warehouse at {url[len('chdb://') :]} is open in another process "
                "(a running `stacklens serve` owns it); run this through that server, or stop it first"
            ) from exc
        raise WarehouseUnavailable(
            f"cannot reach the warehouse at {_redact(url)}: {text.splitlines()[0]}"
        ) from exc
    except OSError as exc:
        raise WarehouseUnavailable(f"cannot reach the warehouse at {_redact(url)}: {exc}") from exc
    raise WarehouseUnavailable(
        f"unsupported warehouse URL scheme {scheme!r}: use chdb://PATH or http(s)://HOST:8123"
    )


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def ensure_database(settings: Settings) -> None:
    """Create the configured database when missing (the migration runner calls this first)."""
    admin = open_client(settings.resolved_warehouse_url, None)
    # A string literal, like the migration runner's clause, so macros such as '{cluster}' work too.
    cluster = (settings.warehouse_cluster or "").replace("\\", "\\\\").replace("'", "\\'")
    on_cluster = f" ON CLUSTER '{cluster}'" if cluster else ""
    admin.command(f"CREATE DATABASE IF NOT EXISTS {settings.warehouse_database}{on_cluster}")


def get_warehouse(settings: Settings) -> Client:
    """A client bound to ``settings``' database; one per (URL, database) per process, thread-safe to share."""
    return warehouse_client(settings.resolved_warehouse_url, settings.warehouse_database)


def warehouse_client(url: str, database: str) -> Client:
    """The shared client of ``database`` at ``url`` (what :func:`get_warehouse` resolves settings to)."""
    key = (url, database)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = open_client(*key)
            _clients[key] = client
        return client


def own_client(url: str, database: str) -> Client:
    """A client of its own (not shared, not cached) of ``database`` at ``url``, for one long read such as a
    streamed download: a shared client runs one query at a time, and a stream holds its connection until
    its last block is read. The caller closes it."""
    return open_client(url, database)


@contextlib.contextmanager
def analyst_client(settings: Settings) -> Iterator[Client]:
    """A client of its own for one analyst question (Explore), held for it alone: the analysts' lane. The
    shared client runs one statement at a time, and a question of a second on it held every issue page of
    every organization behind it; on a connection of its own it waits for nobody and nobody waits for it (its
    threads and CPU priority are the question's own limits, stacklens.explore.sql.Limits).

    Between questions the client waits idle for the next one (at most :data:`ANALYST_IDLE_CLIENTS` per
    warehouse and database): opening one reads the engine's ~1,500 setting definitions into Python, ~11 ms of
    CPU (20 ms and more on a busy host), and with ten agents asking Explore in a loop that was most of what a
    question cost the server, on the cores the front door needs (bench/agents.py). A question that ends in an
    error the service did not raise itself closes its client instead: it may be mid-statement."""
    key = (settings.resolved_warehouse_url, settings.warehouse_database)
    with _lock:
        idle = _analysts.get(key)
        client = idle.pop() if idle else None
    if client is None:
        client = own_client(*key)
    try:
        yield client
    except (StackLensError, ClickHouseError):
        # The engine answered (a limit met, a field refused): the client is between statements.
        _give_back(key, client)
        raise
    except BaseException:
        client.close()
        raise
    _give_back(key, client)


def _give_back(key: tuple[str, str], client: Client) -> None:
    with _lock:
        idle = _analysts.setdefault(key, [])
        kept = len(idle) < ANALYST_IDLE_CLIENTS
        if kept:
            idle.append(client)
    if not kept:
        client.close()


def is_embedded(url: str) -> bool:
    """Whether ``url`` names the embedded engine (a data directory one process at a time may open)."""
    return urlsplit(url).scheme == "chdb"


def warehouse_client_in_turn(url: str, database: str, wait_seconds: float) -> Client:
    """The shared client of ``database`` at ``url``; an embedded warehouse open in another process is waited
    for (up to ``wait_seconds``) instead of refused. For processes that take turns on one data directory,
    each giving it back with :func:`release_client` when done (the Dagster processes of a host without a
    ClickHouse server)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return warehouse_client(url, database)
        except WarehouseBusy:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.25)


def inserting_client(settings: Settings) -> Client:
    """The front door's own client of ``settings``' warehouse: its inserts run every materialized view
    behind a table (a tenth of a second and more), and on a client of their own no read waits behind them
    (an embedded client runs one statement at a time)."""
    key = (settings.resolved_warehouse_url, settings.warehouse_database)
    with _lock:
        client = _inserters.get(key)
        if client is None:
            client = _inserters[key] = open_client(*key)
        return client


def second_client(client: Client) -> Client | None:
    """A second client of the warehouse and database of ``client`` (one of this module's shared clients),
    opened on first use and kept beside it, for a read that runs at the same time as one on ``client``
    (stacklens.warehouse.side_by_side); ``None`` for a client this module did not hand out."""
    with _lock:
        key = next((k for k, shared in _clients.items() if shared is client), None)
        if key is None:
            return None
        second = _seconds.get(key)
        if second is None:
            second = open_client(*key)
            _seconds[key] = second
        return second


def release_client(url: str, database: str) -> None:
    """Close this process's clients of ``database`` at ``url``; an embedded engine's directory is free
    again."""
    with _lock:
        clients = [
            _clients.pop((url, database), None),
            _seconds.pop((url, database), None),
            _inserters.pop((url, database), None),
            *_analysts.pop((url, database), []),
        ]
    for client in clients:
        if client is not None:
            client.close()


def reset_clients(keep: Collection[str] = ()) -> None:
    """Forget cached clients (tests that switch databases), but those of the databases in ``keep``: opening a
    client asks the engine for its ~1,800 setting definitions, ~20 ms, and a suite's tests all share the
    ``default`` database's."""
    with _lock:
        for cache in (_clients, _seconds, _inserters, _analysts):
            for key in [key for key in cache if key[1] not in keep]:
                del cache[key]


def give_back_engine_memory(client: Client) -> None:
    """Purge the embedded engine's allocator through ``client`` now, uncounted (a purge is no warehouse work):
    after each pipeline statement and large drain, and every few seconds (:func:`purge_engine_memory`); why
    so often: ``ENGINE_ALLOCATOR_CONF`` in stacklens/warehouse/engine.py. Nothing to do for a ClickHouse
    server's client."""
    if client not in _embedded_clients:
        return
    from stacklens.warehouse.queries import load_query

    with uncounted():
        client.command(load_query("warehouse/purge_allocator"))


def purge_engine_memory(settings: Settings) -> bool:
    """Give the memory the embedded engine freed back to the system; True when it did. The engine's allocator
    (jemalloc) keeps freed pages for reuse and returns them only as later allocations come, so after the
    history's large inserts and the marts' first build the process held ~400 MiB the engine no longer used
    (its tracked memory was tens of MiB); measured: 665 → 76 MiB anonymous after 2 M rows inserted, in
    ~60 ms of CPU, ~1 ms when little was freed. Nothing to do for a ClickHouse server (it has its own memory
    worker) or before the engine has started in this process; and nothing once ``PURGES_AFTER_LAST_CALL``
    purges (stacklens.warehouse.calls) have run with no warehouse call between them: nothing was freed."""
    from stacklens.warehouse.engine import engine_started

    if not settings.embedded_warehouse or not engine_started():
        return False
    if not purge_beats.due():
        return False
    give_back_engine_memory(get_warehouse(settings))
    purge_beats.purged()  # the purge's own call is not counted: a beat with nothing else is quiet
    return True
