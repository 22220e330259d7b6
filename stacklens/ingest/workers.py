"""Ingest worker processes: large batches are decoded and prepared in parallel, outside the request's GIL.

Preparing a line (parse, scrub, normalise, encode) is pure-Python work, ~300 µs of one core per typical
14 KB Sentry line; the embedded warehouse belongs to the server process, so threads cannot spread that work
and more server processes cannot share the engine. A batch at least :data:`POOL_MIN_RAW_BYTES` big is
therefore split between the worker processes: each decodes the body itself (decompressing twice costs less
than shipping the decompressed text across), prepares its share of the lines and hands back encoded rows.
The request's process keeps what needs the engine and the organization's state: the quota, the duplicate
check and the inserts. A batch prepared by workers lands exactly as one prepared in-process would.

Workers are fresh interpreters (a fork of a process running the engine's threads is unsafe; they are started
as child processes talking over pipes, :mod:`stacklens.ingest.worker_processes`) when the first
large batch comes, in the background: that batch is prepared in-process, the ones after it by the workers.
They stop again after :data:`IDLE_STOP_SECONDS` without a large batch: each holds ~45 MiB idle (the
interpreter and the preparation's modules; the server resolves app keys for them, :class:`KnownAppKeys`), and
most installations send small batches only (the demo's shipper and SDKs never reach
:data:`POOL_MIN_RAW_BYTES`), so workers started with the server only held memory. A worker that dies takes
only its batch's preparation: that batch is prepared in-process and the pool is started afresh for the next
one.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from stacklens.c_allocator import release_freed_memory, tune_allocator
from stacklens.ingest.decode import DecodeError, body_digest, decode_body, split_part
from stacklens.ingest.prepare import prepare_lines
from stacklens.ingest.prepared_rows import Attribution, BatchContext, Prepared
from stacklens.ingest.worker_processes import WorkerProcesses, after_each_answer
from stacklens_contract.keys import is_app_key, service_of

if TYPE_CHECKING:  # a worker process imports this module: pydantic's settings would add ~18 MiB to each
    from stacklens.settings import Settings

log = logging.getLogger(__name__)

# Below ~1 MiB of NDJSON (about 70 typical lines) a batch prepares in-process in ~20 ms, and handing it to
# workers (two decodes, pickling the rows back) would cost as much as it saves.
POOL_MIN_RAW_BYTES = 1024 * 1024
# Workers without a batch for this long are stopped (started again by the next large batch, in ~1 s of CPU
# each): a burst's or a backlog's batches come a second or two apart, and a quiet installation gives their
# memory back soon after (under the demo, the history's large batches end before its live traffic, which sends
# none). The pipelines' passes wait while the workers run (:func:`preparing_large_batches`), so this is also
# how long after a backlog's last batch the marts start on it.
IDLE_STOP_SECONDS = 10.0
# A worker gives its batches' memory back this long after its last one: by then the result has been pickled
# and sent. A 13 MiB batch of Sentry lines left ~35 MiB in a worker's arenas, freed between live blocks
# where no threshold returns it; under the demo's history each worker held 73-100 MiB until it stopped.
GIVE_BACK_AFTER_SECONDS = 0.5
# Compressed bodies are judged by a deliberately low expansion: NDJSON of Sentry payloads gzips 10–30x.
_COMPRESSED_EXPANSION = 10


@functools.cache  # asked per request (pool_for); os.cpu_count reads /sys each time
def default_worker_count() -> int:
    """Two workers where there are two cores or more: one core cannot prepare in parallel with itself."""
    cores = os.cpu_count() or 1
    return min(2, cores) if cores > 1 else 0


@dataclass(frozen=True)
class AppKeyResolver:
    """Resolves app keys of one organization against the control store (the server's side); the worker
    processes get :meth:`for_workers` instead."""

    settings: Settings
    org_id: int

    def __call__(self, raw: str) -> Attribution | None:
        # Imported here: the control store pulls in SQLAlchemy's models.
        from stacklens.control.keys.app_attributions import app_key_attribution

        return app_key_attribution(self.settings, self.org_id, raw)

    def for_workers(self) -> KnownAppKeys:
        """The organization's current app keys, read here, for a batch the worker processes prepare."""
        from stacklens.control.keys.app_attributions import org_app_key_attributions

        return KnownAppKeys(org_app_key_attributions(self.settings, self.org_id))


@dataclass(frozen=True)
class KnownAppKeys:
    """A worker's resolver: the organization's current app keys by their hash, as the server read them when
    it handed the batch over (no older than the server's own answers, :mod:`stacklens.control.keys.
    app_attributions`). A worker thus loads neither SQLAlchemy nor the control store's models: each held
    ~33 MiB more for them."""

    by_hash: Mapping[str, Attribution]

    def __call__(self, raw: str) -> Attribution | None:
        if not isinstance(raw, str) or not is_app_key(raw) or any(char.isspace() for char in raw):
            return None
        found = self.by_hash.get(hashlib.sha256(raw.encode("utf-8")).hexdigest())  # as hash_key does
        if found is None or found.service is not None:
            return found
        return replace(found, service=service_of(raw))


@dataclass(frozen=True)
class DecodeFailure:
    """A body no worker could read: the status and message :class:`DecodeError` carries, as plain data."""

    status: int
    message: str


def estimated_raw_bytes(body: bytes, content_encoding: str | None) -> int:
    encoding = (content_encoding or "identity").strip().lower()
    return len(body) if encoding in ("", "identity") else len(body) * _COMPRESSED_EXPANSION


def prepare_part(
    body: bytes,
    content_encoding: str | None,
    part: int,
    parts: int,
    context: BatchContext,
    resolve: KnownAppKeys,
) -> Prepared | DecodeFailure:
    """Worker side: decode the whole body and prepare share ``part`` of ``parts`` of its lines."""
    try:
        data = decode_body(body, content_encoding)
        first_number, lines = split_part(data, part, parts)
    except DecodeError as exc:
        return DecodeFailure(exc.status, str(exc))
    prepared = prepare_lines(lines, first_number, context, resolve)
    if part == 0:  # one worker digests the body for the Idempotency-Key check (see service)
        prepared.body_hash = body_digest(data)
    return prepared


# Set in a worker after each answer is sent (worker_processes.after_each_answer): the batch's body, rows and
# pickled answer are free then, and _give_back_after_batches returns them. Set when the share merely ended, a
# loaded machine still pickling and sending a large answer could give back before it, and keep it after.
_prepared = threading.Event()


def _give_back_after_batches() -> None:
    """A worker's thread: once no share has ended for :data:`GIVE_BACK_AFTER_SECONDS` after the last one (its
    result sent; a worker kept busy holds what it uses anyway), the C allocator's free blocks go back to the
    system (:func:`stacklens.c_allocator.release_freed_memory`, a few milliseconds)."""
    while True:
        _prepared.wait()
        _prepared.clear()
        time.sleep(GIVE_BACK_AFTER_SECONDS)
        if not _prepared.is_set():  # else another share ended meanwhile: wait for the quiet after it
            release_freed_memory()


WORKER_NICENESS = 5


def _start_worker() -> None:
    """Set up a worker process: it leaves Ctrl-C to the server and gives its batches' memory back.

    Ctrl-C in a terminal reaches the whole process group: the server stops its workers itself, so a worker
    ignores the interrupt instead of printing a traceback of its own. A server killed outright (SIGKILL, a
    crash) cannot stop them: its end of the worker's task pipe closes with it, and the worker ends at the end
    of its input (:func:`stacklens.ingest.worker_processes.serve_tasks`), with no watchdog of its own.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tune_allocator()  # before the thread below (stacklens/c_allocator.py)
    # Preparing lines can wait a few milliseconds; a person reading a page cannot. Under a burst both workers
    # keep the two cores busy, and at equal priority the server's page reads queued behind them (issue list
    # p95 1.8 s during bench/burst.py): a lower priority costs the workers nothing when the cores are idle.
    os.nice(WORKER_NICENESS)
    after_each_answer(_prepared.set)
    threading.Thread(target=_give_back_after_batches, name="give-back-memory", daemon=True).start()


def _load_worker_modules() -> int:
    """Import what preparing a share needs (already loaded with this module: the pool's warm-up waits for
    the interpreters to start)."""
    return os.getpid()


class PreparePool:
    """The ingest worker processes of one server process: started by the first large batch (or
    :meth:`warm_up`), stopped after :data:`IDLE_STOP_SECONDS` without one."""

    def __init__(self, workers: int, idle_stop_seconds: float = IDLE_STOP_SECONDS) -> None:
        self.workers = workers
        self.idle_stop_seconds = idle_stop_seconds
        self._executor: WorkerProcesses | None = None
        self._ready: WorkerProcesses | None = None  # the executor once its workers have started
        self._lock = threading.Lock()
        self._in_flight = 0
        self._last_used = time.monotonic()
        self._idle_watch: threading.Thread | None = None

    def _pool(self) -> WorkerProcesses:
        with self._lock:
            if self._executor is None:
                self._executor = WorkerProcesses(self.workers, _start_worker, ())
                self._last_used = time.monotonic()
                if self._idle_watch is None or not self._idle_watch.is_alive():
                    self._idle_watch = threading.Thread(
                        target=self._stop_when_idle, name="ingest-workers-idle", daemon=True
                    )
                    self._idle_watch.start()
            return self._executor

    def running(self) -> bool:
        """Whether the worker processes have started and take batches now."""
        with self._lock:
            return self._ready is not None and self._ready is self._executor

    def active(self) -> bool:
        """Whether the worker processes run or start: a large batch came within :attr:`idle_stop_seconds`."""
        with self._lock:
            return self._executor is not None

    def prepare(
        self, body: bytes, content_encoding: str | None, context: BatchContext, resolve: AppKeyResolver
    ) -> Prepared | DecodeFailure | None:
        """The batch prepared by the workers; ``None`` when the pool broke or is still starting (prepare it
        in-process)."""
        return self.submit(body, content_encoding, context, resolve)()

    def submit(
        self, body: bytes, content_encoding: str | None, context: BatchContext, resolve: AppKeyResolver
    ) -> Callable[[], Prepared | DecodeFailure | None]:
        """Hand the batch to the workers now; the returned call waits for it (see :meth:`prepare`).

        The caller's thread is free meanwhile, for work that does not need the prepared rows. While the
        workers are stopped, this starts them in the background and the call returns ``None`` at once: the
        batch is prepared in-process rather than waiting a second or two for the interpreters to start.
        """
        if not self.running():
            self._start_in_background()
            return lambda: None
        known = resolve.for_workers()  # the control store is read here, in the server
        with self._lock:
            self._in_flight += 1
            self._last_used = time.monotonic()
        try:
            pool = self._pool()
            futures: list[Future[Prepared | DecodeFailure]] = [
                pool.submit(prepare_part, body, content_encoding, part, self.workers, context, known)
                for part in range(self.workers)
            ]
        except BrokenProcessPool:
            self._done()
            return self._broken(pool)
        except RuntimeError:  # stopped for idleness between the check and the submit: prepare in-process
            self._done()
            return lambda: None

        def collect() -> Prepared | DecodeFailure | None:
            try:
                parts = [future.result() for future in futures]
            except BrokenProcessPool:
                return self._broken(pool)()
            finally:
                self._done()
            prepared = Prepared()
            for part in parts:
                if isinstance(part, DecodeFailure):
                    return part
                prepared.merge(part)
            return prepared

        return collect

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._last_used = time.monotonic()

    def _broken(self, pool: WorkerProcesses) -> Callable[[], None]:
        log.warning("an ingest worker process died; this batch is prepared in-process")
        self._discard(pool)
        self._start_in_background()  # fresh workers for the next batch
        return lambda: None

    def _start_in_background(self) -> None:
        with self._lock:
            if self._executor is not None:  # starting already
                return
        threading.Thread(target=self._warm_up_quietly, name="ingest-workers-start", daemon=True).start()

    def _warm_up_quietly(self) -> None:
        try:
            self.warm_up()
        except Exception as exc:  # noqa: BLE001 - the next large batch tries again; serving goes on either way
            log.warning(
                "ingest: the worker processes did not start (%s); batches are prepared in-process", exc
            )

    def warm_up(self) -> None:
        """Start the worker processes and load what they run; large batches go to them from then on."""
        pool = self._pool()
        try:
            for future in [pool.submit(_load_worker_modules) for _ in range(self.workers)]:
                future.result()
        except (BrokenProcessPool, RuntimeError):
            self._discard(pool)
            raise
        with self._lock:
            if self._executor is pool:
                self._ready = pool
                self._last_used = time.monotonic()

    def _stop_when_idle(self) -> None:
        """Stop the workers once no batch came for :attr:`idle_stop_seconds` (the thread ends with them)."""
        while True:
            with self._lock:
                pool = self._executor
                if pool is None:
                    self._idle_watch = None
                    return
                wait = self._last_used + self.idle_stop_seconds - time.monotonic()
                idle = self._in_flight == 0 and wait <= 0 and self._ready is pool
                if idle:
                    self._executor = self._ready = None
                    self._idle_watch = None
            if idle:
                log.info(
                    "ingest: no large batch for %.0f s; the worker processes stop", self.idle_stop_seconds
                )
                pool.shutdown(wait=True, cancel_futures=True)
                return
            time.sleep(min(max(wait, 0.5), self.idle_stop_seconds))

    def _discard(self, pool: WorkerProcesses) -> None:
        with self._lock:
            if self._executor is pool:
                self._executor = None
            if self._ready is pool:
                self._ready = None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        with self._lock:
            pool, self._executor, self._ready = self._executor, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_pools: dict[int, PreparePool] = {}
_pools_lock = threading.Lock()


def pool_for(settings: Settings) -> PreparePool | None:
    """The process's worker pool for ``settings.ingest_workers`` workers; ``None`` when set to 0."""
    workers = settings.ingest_workers if settings.ingest_workers is not None else default_worker_count()
    if workers < 1:
        return None
    with _pools_lock:
        if workers not in _pools:
            _pools[workers] = PreparePool(workers)
        return _pools[workers]


def preparing_large_batches() -> bool:
    """Whether this process's ingest workers run: large batches are landing (a shipper's backlog, a demo's
    history), the last of them less than :data:`IDLE_STOP_SECONDS` ago."""
    with _pools_lock:
        pools = list(_pools.values())
    return any(pool.active() for pool in pools)


def close_pools() -> None:
    """Stop every worker process of this process (server shutdown, tests)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()
