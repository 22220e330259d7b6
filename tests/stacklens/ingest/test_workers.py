"""Ingest worker processes: a large batch prepared by real spawned workers lands exactly as in-process.

The workers resolve app keys against the real control store (SQLite file of the test's data dir) and read
real sentry-sdk payloads; the comparison is byte for byte on the encoded rows.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from stacklens.ingest.decode import DecodeError, body_digest, decode_body, split_lines
from stacklens.ingest.prepare import prepare_lines
from stacklens.ingest.prepared_rows import BatchContext, Prepared
from stacklens.ingest.service import ingest_body, prepare_body
from stacklens.ingest.workers import (
    POOL_MIN_RAW_BYTES,
    AppKeyResolver,
    DecodeFailure,
    PreparePool,
    close_pools,
    estimated_raw_bytes,
    pool_for,
    preparing_large_batches,
)
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.routers.test_ingest import error_payload, line, transaction_payload


@pytest.fixture(scope="module")
def pool() -> Iterator[PreparePool]:
    workers = PreparePool(2)
    workers.warm_up()  # as the first large batch does, in the background
    try:
        yield workers
    finally:
        workers.close()


def mixed_body(app_key: str, events: int = 120) -> bytes:
    """Errors and transactions with spans, plus one bad line, one skipped item and one unknown app key."""
    error, transaction = error_payload(), transaction_payload()
    lines: list[bytes] = []
    for index in range(events):
        payload = dict(transaction if index % 4 == 0 else error, event_id=uuid.uuid4().hex)
        lines.append(line(payload, app_key, "transaction" if index % 4 == 0 else "event"))
    lines.insert(7, b'{"v": 1, "type": "event", "payload": ')  # truncated JSON
    lines.insert(50, line({"discarded_events": []}, app_key, "client_report"))
    lines.insert(90, line(dict(error, event_id=uuid.uuid4().hex), "stacklens_app_" + "0" * 40))
    return b"\n".join(lines) + b"\n"


def gzip_batch(
    settings: Settings, make_org: Callable[..., dict[str, Any]], batch_id: str, events: int
) -> tuple[BatchContext, AppKeyResolver, bytes]:
    """A new organization's batch of ``events`` (:func:`mixed_body`), gzipped; its context and resolver."""
    org = make_org("Acme")
    body = gzip.compress(mixed_body(org["app_key"], events=events))
    return (
        BatchContext(org["org_id"], batch_id, time.time(), None),
        AppKeyResolver(settings, org["org_id"]),
        body,
    )


def in_process(settings: Settings, org_id: int, data: bytes, context: BatchContext) -> Prepared:
    return prepare_lines(split_lines(data), 1, context, AppKeyResolver(settings, org_id))


def summary(prepared: Prepared) -> dict[str, Any]:
    return {
        "tables": prepared.tables,
        "columns": prepared.columns,
        "counts": (prepared.lines, prepared.stored, prepared.attributed, prepared.skipped),
        "rejected": sorted(prepared.rejected, key=lambda r: r["line"]),
    }


def test_workers_prepare_the_same_rows_as_in_process(pool: PreparePool, settings: Settings, make_org) -> None:
    org = make_org("Acme")
    data = mixed_body(org["app_key"])
    context = BatchContext(org["org_id"], "batch-1", time.time(), None)
    resolve = AppKeyResolver(settings, org["org_id"])

    from_workers = pool.prepare(gzip.compress(data), "gzip", context, resolve)

    assert isinstance(from_workers, Prepared)
    expected = in_process(settings, org["org_id"], data, context)
    assert summary(from_workers) == summary(expected)
    assert from_workers.attributed == 120 and from_workers.skipped == 1
    assert [r["line"] for r in from_workers.rejected] == [8, 91]  # line numbers of the whole body
    assert len(from_workers.tables["transactions"]) == 30
    assert all(row[4] for row in from_workers.tables["transactions"])  # each transaction kept its spans
    # The digest the Idempotency-Key check compares is the decompressed body's, whoever decoded it.
    assert from_workers.body_hash == body_digest(data) == prepare_body(data, context, resolve).body_hash
    # The workers resolved the app keys the server handed them, without the control store's modules.
    assert "sqlalchemy" not in loaded_in(pool._pool())


def test_a_body_no_worker_can_read_gets_the_in_process_answer(
    pool: PreparePool, settings: Settings, make_org
) -> None:
    org_id = make_org("Acme")["org_id"]  # the server reads the organization's app keys for the workers
    body = gzip.compress(b'{"v": 1}\n' * 1000)[:-20]
    context = BatchContext(org_id, "batch-2", time.time(), None)

    answer = pool.prepare(body, "gzip", context, AppKeyResolver(settings, org_id))

    with pytest.raises(DecodeError) as expected:
        decode_body(body, "gzip")
    assert answer == DecodeFailure(expected.value.status, str(expected.value))
    assert answer.status == 400 and "truncated" in answer.message


def test_a_killed_worker_costs_only_its_batch_the_next_batch_has_workers_again(
    settings: Settings,
    make_org,
) -> None:
    context, resolve, body = gzip_batch(settings, make_org, "batch-3", events=8)
    workers = PreparePool(1)
    try:
        workers.warm_up()
        pid = workers._pool().submit(os.getpid).result()
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)

        assert workers.prepare(body, "gzip", context, resolve) is None  # the caller prepares in-process

        _wait_running(workers)  # the next batch started them again, in the background
        again = workers.prepare(body, "gzip", context, resolve)
        assert isinstance(again, Prepared) and again.attributed == 8
        assert workers._pool().submit(os.getpid).result() != pid
    finally:
        workers.close()


def _wait_running(workers: PreparePool, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not workers.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers.running()


def test_the_first_large_batch_starts_the_workers_and_is_prepared_in_process(
    settings: Settings, make_org
) -> None:
    """Workers are not started before a large batch needs them; that batch does not wait for them."""
    context, resolve, body = gzip_batch(settings, make_org, "batch-4", events=8)
    workers = PreparePool(1)
    try:
        assert not workers.running()
        started = time.monotonic()
        assert workers.prepare(body, "gzip", context, resolve) is None
        assert time.monotonic() - started < 0.5  # no wait for an interpreter to start

        _wait_running(workers)
        by_workers = workers.prepare(body, "gzip", context, resolve)
        assert isinstance(by_workers, Prepared) and by_workers.attributed == 8
    finally:
        workers.close()


def test_idle_workers_stop_and_the_next_large_batch_starts_them_again(settings: Settings, make_org) -> None:
    context, resolve, body = gzip_batch(settings, make_org, "batch-5", events=8)
    workers = PreparePool(1, idle_stop_seconds=1.0)
    try:
        assert not workers.active()
        workers.warm_up()
        first = workers.prepare(body, "gzip", context, resolve)
        assert isinstance(first, Prepared) and first.attributed == 8
        assert workers.active()  # large batches are landing: the pipelines' passes wait for them
        pid = workers._pool().submit(os.getpid).result()

        deadline = time.monotonic() + 30
        while (workers.running() or _alive(pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not workers.running() and not _alive(pid)  # stopped: its memory is given back
        assert not workers.active()

        assert workers.prepare(body, "gzip", context, resolve) is None  # in-process while they start
        _wait_running(workers)
        again = workers.prepare(body, "gzip", context, resolve)
        assert isinstance(again, Prepared) and again.attributed == 8
    finally:
        workers.close()


def test_large_bodies_go_to_the_workers_small_ones_stay_in_process() -> None:
    assert estimated_raw_bytes(b"x" * POOL_MIN_RAW_BYTES, None) >= POOL_MIN_RAW_BYTES
    assert estimated_raw_bytes(b"x" * (POOL_MIN_RAW_BYTES // 10 + 1), "gzip") >= POOL_MIN_RAW_BYTES
    assert estimated_raw_bytes(b"x" * 50_000, "gzip") < POOL_MIN_RAW_BYTES  # ~100 compressed lines


def test_the_process_prepares_large_batches_while_a_pool_runs(settings: Settings) -> None:
    close_pools()
    assert not preparing_large_batches()
    pool = pool_for(settings.model_copy(update={"ingest_workers": 1}))
    assert pool is not None and not preparing_large_batches()  # made, not started: no batch came
    try:
        pool.warm_up()
        assert preparing_large_batches()
    finally:
        close_pools()
    assert not preparing_large_batches()


def test_worker_count_setting(settings: Settings) -> None:
    assert pool_for(settings.model_copy(update={"ingest_workers": 0})) is None
    assert pool_for(settings.model_copy(update={"ingest_workers": 3})).workers == 3
    close_pools()


def test_ingest_body_lands_a_worker_prepared_batch_once(
    settings: Settings,
    make_org,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    apply_migrations(settings, up_to=99)
    org = make_org("Acme")
    body = mixed_body(org["app_key"], events=400)
    assert estimated_raw_bytes(body, None) >= POOL_MIN_RAW_BYTES
    current = settings.model_copy(update={"ingest_workers": 2})
    pool_for(current).warm_up()  # as the first large batch does, in the background
    taken: list[Counter[tuple[int, str]]] = []  # items per (project, category) each request spends
    by_workers: list[int] = []
    real_submit = PreparePool.submit

    def counted(self: PreparePool, *args: Any) -> Callable[[], Prepared | DecodeFailure | None]:
        collect = real_submit(self, *args)

        def collect_and_count() -> Prepared | DecodeFailure | None:
            prepared = collect()
            by_workers.append(prepared.attributed)
            return prepared

        return collect_and_count

    monkeypatch.setattr(PreparePool, "submit", counted)
    try:
        first = ingest_body(
            current,
            org["org_id"],
            body,
            None,
            header_app_key=None,
            idempotency_key=None,
            take_events=taken.append,
        )
        again = ingest_body(
            current,
            org["org_id"],
            body,
            None,
            header_app_key=None,
            idempotency_key=None,
            take_events=taken.append,
        )
    finally:
        close_pools()

    assert (first.accepted, first.duplicates, first.skipped) == (400, 0, 1)
    assert [r["line"] for r in first.rejected] == [8, 91]
    assert (again.accepted, again.duplicates) == (0, 400)
    assert [sum(counts.values()) for counts in taken] == [400, 400]
    assert by_workers == [400, 400]
    stored = get_warehouse(settings).query(
        "SELECT count(), uniqExact(event_id) FROM events WHERE org_id = {org:UInt64}",
        parameters={"org": org["org_id"]},
    )
    assert stored.result_rows[0] == (300, 300)
    spans = get_warehouse(settings).query(
        "SELECT count() FROM spans WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]}
    )
    per_transaction = len(json.loads(json.dumps(transaction_payload()))["spans"])
    assert spans.result_rows[0][0] == 100 * per_transaction


def test_warm_up_starts_every_worker_with_its_modules_loaded() -> None:
    workers = PreparePool(2)
    try:
        workers.warm_up()
        pool = workers._pool()
        assert len(pool._processes) == 2
        loaded = loaded_in(pool)
        assert "stacklens.ingest.prepare" in loaded
        # App keys are resolved by the server (KnownAppKeys): a worker never loads the control store.
        assert not {"sqlalchemy", "stacklens.control.db"} & loaded
        # Nor the settings' pydantic (~18 MiB a worker): the server's settings never cross to a worker.
        assert not {"pydantic", "stacklens.settings"} & loaded
    finally:
        workers.close()


def loaded_in(pool: Any) -> set[str]:
    """The modules one worker process has loaded. Asked with a built-in (eval): a function of this module
    would import the test module, and what it imports, into the worker to run it."""
    return set(pool.submit(eval, "list(__import__('sys').modules)").result())


def test_workers_leave_ctrl_c_to_the_server() -> None:
    """An interrupt sent to a worker (as a terminal's Ctrl-C reaches the whole group) is ignored."""
    workers = PreparePool(1)
    try:
        pid = workers._pool().submit(os.getpid).result()
        os.kill(pid, signal.SIGINT)
        time.sleep(0.3)
        assert workers._pool().submit(os.getpid).result() == pid  # the same worker, still serving
    finally:
        workers.close()


def test_workers_end_when_their_server_is_killed(tmp_path) -> None:
    """A server killed outright (SIGKILL) cannot stop its workers: they notice and end by themselves."""
    import subprocess
    import sys

    script = (
        "import os, sys\n"
        "from stacklens.ingest.workers import PreparePool\n"
        "pool = PreparePool(2)\n"
        "pool.warm_up()\n"
        "print(' '.join(str(p) for p in pool._pool().pids), flush=True)\n"
        "sys.stdin.read()\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        workers = [int(pid) for pid in server.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(pid) for pid in workers)
        server.kill()
        server.wait(10)
        # Each worker's watchdog looks once a second; at nice 5 on a loaded machine it may wait a while.
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers)
    finally:
        server.kill()
        server.wait(10)
        for pipe in (server.stdin, server.stdout):
            if pipe is not None:
                pipe.close()  # unclosed, the pipes warn when collected (a ResourceWarning fails -W error)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by init) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_the_workers_resolver_answers_as_the_control_store(settings: Settings, make_org) -> None:
    """What the server hands the workers (every current app key of the organization) resolves each key as the
    control store does: the primary key, a per-service key, a regenerated (revoked) key, another
    organization's key and a value that is no key at all."""
    from stacklens.control.db import session_scope
    from stacklens.control.keys.lifecycle import create_app_key, regenerate_app_key

    org, other = make_org("Acme"), make_org("Globex")
    with session_scope(settings) as session:
        service_key = create_app_key(session, org["project_id"], "checkout")
    with session_scope(settings) as session:
        current = regenerate_app_key(session, org["project_id"])
    resolve = AppKeyResolver(settings, org["org_id"])
    known = resolve.for_workers()

    for raw in (current, service_key, org["app_key"], other["app_key"], "stacklens_app_" + "0" * 40, "x y"):
        assert known(raw) == resolve(raw), raw
    assert known(current) is not None and known(current).service is None
    assert known(service_key) is not None and known(service_key).service == "checkout"
    assert known(org["app_key"]) is None  # regenerated: no longer current


def _status_mib(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        kib = next(int(row.split()[1]) for row in status if row.startswith(f"{field}:"))
    return kib / 1024


def _anon_mib(pid: int) -> float:
    return _status_mib(pid, "RssAnon")


def test_a_worker_gives_its_batches_memory_back(settings: Settings, make_org) -> None:
    """A large batch's bodies and rows are freed between live blocks of the C allocator's arenas: the worker
    gives them back once the result is sent, instead of holding them until it stops."""
    context, resolve, body = gzip_batch(settings, make_org, "batch-6", events=3000)
    # Idle for longer than this test waits below (20 s), so the worker cannot stop while it is watched.
    workers = PreparePool(1, idle_stop_seconds=60)
    try:
        workers.warm_up()
        pid = workers._pool().submit(os.getpid).result()
        started = _anon_mib(pid)
        # What the batches held is the worker's peak, not its memory once the answer is back: the worker
        # gives it back right after sending the result, so a late reading (a loaded machine) finds it gone.
        # The kernel's high-water mark of the resident set is reset here (`clear_refs` 5) and read after.
        with open(f"/proc/{pid}/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        resident = _status_mib(pid, "VmRSS")
        for _ in range(3):
            done = workers.prepare(body, "gzip", context, resolve)
            assert isinstance(done, Prepared) and done.attributed == 3000
        held = _status_mib(pid, "VmHWM")

        deadline = time.monotonic() + 20
        while _anon_mib(pid) > started + 6 and time.monotonic() < deadline:
            time.sleep(0.2)
        given_back = _anon_mib(pid)
    finally:
        workers.close()
    assert held > resident + 15, (resident, held)  # the batches' memory was the worker's
    assert given_back <= started + 6, (started, held, given_back)
