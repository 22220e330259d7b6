"""The warehouse client marks its own calls that wait (stacklens/warehouse/client.py): every query, insert and
command of a client this module hands out stops inside a loop-only section before reaching the warehouse, so
work run on the event loop cannot wait for the warehouse by forgetting a mark; elsewhere the calls run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from clickhouse_connect.driver.client import Client

from api.admission import LOOP_BODY_BYTES, admitted
from stacklens.blocking import WouldBlock, loop_only
from stacklens.explore.run import QueryTooCostly
from stacklens.settings import Settings
from stacklens.warehouse.calls import PURGES_AFTER_LAST_CALL, uncounted, warehouse_calls
from stacklens.warehouse.client import (
    analyst_client,
    ensure_database,
    get_warehouse,
    give_back_engine_memory,
    inserting_client,
    purge_engine_memory,
    second_client,
)

# A read that takes a second in the engine: run on the loop, it would hold every request for that second.
SLOW = "SELECT count() FROM numbers(5) WHERE sleepEachRow(0.2) = 0"


def _every_waiting_call(client: Client) -> dict[str, Callable[[], Any]]:
    """Each public way of reaching the warehouse, with a statement that would be seen had it run."""
    return {
        "query": lambda: client.query(SLOW),
        "query_rows_stream": lambda: list(client.query_rows_stream(SLOW)),
        "query_np": lambda: client.query_np(SLOW),
        "query_arrow": lambda: client.query_arrow(SLOW),
        "raw_query": lambda: client.raw_query(SLOW),
        "raw_stream": lambda: b"".join(client.raw_stream(SLOW)),
        "command": lambda: client.command("INSERT INTO planted SELECT 1"),
        "insert": lambda: client.insert("planted", [[2]], column_names=["n"]),
        "raw_insert": lambda: client.raw_insert("planted", ["n"], b"3\n", fmt="TSV"),
        "ping": lambda: client.ping(),
    }


def test_every_call_that_waits_stops_on_the_loop_before_the_warehouse(settings: Settings) -> None:
    ensure_database(settings)
    shared = get_warehouse(settings)
    shared.command("CREATE TABLE planted (n UInt8) ENGINE = MergeTree ORDER BY n")
    clients = {"shared": shared, "inserting": inserting_client(settings), "second": second_client(shared)}
    with analyst_client(settings) as analyst:
        clients["analyst"] = analyst
        for kind, client in clients.items():
            assert client is not None
            for name, call in _every_waiting_call(client).items():
                started = time.monotonic()
                with pytest.raises(WouldBlock, match="a warehouse call"), loop_only():
                    call()
                assert time.monotonic() - started < 0.5, f"{kind}.{name} reached the warehouse first"
        # Outside a loop-only section the same calls run (the marks cost nothing there).
        assert analyst.query("SELECT 1").result_rows == [(1,)]
    assert shared.query("SELECT count() FROM planted").result_rows == [(0,)], "nothing was written"
    shared.insert("planted", [[2]], column_names=["n"])
    assert shared.query("SELECT count() FROM planted").result_rows == [(1,)]


def test_a_warehouse_read_planted_in_an_admission_without_a_mark_runs_on_a_thread(settings: Settings) -> None:
    # A future step of an admission reads the warehouse and nobody marks it: run on the event loop (a body of
    # a few bytes), the client's own mark stops it before the read, and the admission runs again on its
    # threads; the loop meanwhile keeps turning.
    ensure_database(settings)
    client = get_warehouse(settings)
    calls: list[str] = []

    def admit() -> int:
        calls.append(threading.current_thread().name)
        return int(client.query(SLOW).result_rows[0][0])  # no may_block: the planted call

    async def run() -> tuple[int, int, str]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticking = asyncio.create_task(ticker())
        answer = await admitted(LOOP_BODY_BYTES, admit)
        ticking.cancel()
        return answer, ticks, threading.current_thread().name

    answer, ticks, loop_thread = asyncio.run(run())
    assert answer == 5
    assert calls[0] == loop_thread and calls[1].startswith("stacklens-admission") and len(calls) == 2
    # The read took ~1 s on a thread; had it run on the loop, the ticker could not have turned during it.
    assert ticks >= 20, f"the loop turned {ticks} times during a one-second read"


def _anonymous_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("RssAnon:"))
    return int(line.split()[1]) / 1024


def test_the_engine_gives_back_what_a_large_statement_freed(settings: Settings) -> None:
    """The embedded engine's allocator keeps the memory a large statement freed until it is purged: a
    statement that builds ~200 MiB of strings leaves most of it resident, and the purge gives it back."""
    ensure_database(settings)
    client = get_warehouse(settings)
    purge_engine_memory(settings)
    client.query("SELECT length(groupArray(repeat('x', 200))) FROM numbers(1000000)")
    held = _anonymous_mib()
    assert purge_engine_memory(settings)
    assert _anonymous_mib() < held - 50


def test_a_large_statements_memory_goes_back_through_its_own_client(settings: Settings) -> None:
    """The pipelines' statements and the large drains purge right after they end
    (give_back_engine_memory), through the client that ran them, uncounted; a client the service did not
    open on the embedded engine is left alone."""
    ensure_database(settings)
    client = get_warehouse(settings)
    purge_engine_memory(settings)
    client.query("SELECT length(groupArray(repeat('x', 200))) FROM numbers(1000000)")
    held, calls = _anonymous_mib(), warehouse_calls()
    give_back_engine_memory(client)
    assert _anonymous_mib() < held - 50
    assert warehouse_calls() == calls

    class Remote:  # a server's client: what a purge statement would reach is not this process's memory
        def command(self, sql: str) -> None:
            raise AssertionError(f"purged through a server's client: {sql}")

    give_back_engine_memory(Remote())


def test_the_purge_skips_the_beats_in_which_nothing_ran(settings: Settings) -> None:
    """An idle server's purge statements mapped the engine's library back for nothing: once a few purges
    found no warehouse call since the last one, the purge waits for the next call."""
    ensure_database(settings)
    client = get_warehouse(settings)
    client.query("SELECT 1")
    purged = [purge_engine_memory(settings) for _ in range(PURGES_AFTER_LAST_CALL + 3)]
    assert purged == [True] * (PURGES_AFTER_LAST_CALL + 1) + [False, False]
    client.query("SELECT 1")
    assert purge_engine_memory(settings)


def test_the_calls_counted_for_the_pipelines_leave_out_the_purges_and_the_checks(settings: Settings) -> None:
    """The pipelines' idle check (pipelines/idle.py) skips a pass when no call ended since it found nothing:
    the allocator's purges and the check's own reads do not count, any other call does."""
    ensure_database(settings)
    client = get_warehouse(settings)
    before = warehouse_calls()
    client.query("SELECT 1")
    assert warehouse_calls() == before + 1
    before = warehouse_calls()
    assert purge_engine_memory(settings)
    with uncounted():
        client.query("SELECT 1")
    assert purge_engine_memory(settings)
    assert warehouse_calls() == before
    client.command("SELECT 1")
    assert warehouse_calls() == before + 1


def test_a_clickhouse_server_is_not_purged(settings: Settings) -> None:
    """A ClickHouse server returns its own memory: nothing is sent to it."""
    server = settings.model_copy(update={"warehouse_url": "http://127.0.0.1:9/"})
    assert not server.embedded_warehouse
    assert not purge_engine_memory(server)


def test_an_analyst_client_waits_for_the_next_question_unless_its_question_broke(settings: Settings) -> None:
    # Opening a client reads the engine's setting definitions (~11 ms of CPU): the analysts' lane keeps the
    # client of a question for the next one, and closes one left by an error the service did not raise.
    ensure_database(settings)
    with analyst_client(settings) as first:
        assert first.query("SELECT 1").result_rows == [(1,)]
    with analyst_client(settings) as again, analyst_client(settings) as beside:
        assert again is first, "the idle client answers the next question"
        assert beside is not first, "a question beside it gets a client of its own"
    with pytest.raises(QueryTooCostly), analyst_client(settings) as limited:
        raise QueryTooCostly("the query ran longer than its 20 s limit")  # the engine answered: kept
    handed: list[Client] = []

    def break_a_question() -> None:
        with analyst_client(settings) as broken:
            handed.append(broken)
            raise RuntimeError("stopped mid-statement")

    with pytest.raises(RuntimeError):
        break_a_question()
    broken = handed[0]
    assert broken is limited
    with analyst_client(settings) as after, analyst_client(settings) as other:
        assert broken not in (after, other), "a client whose question broke is not handed out again"
        assert after.query("SELECT 2").result_rows == [(2,)]


def test_forgetting_the_clients_can_keep_some_databases(stores: Settings) -> None:
    from stacklens.warehouse.client import get_warehouse, reset_clients, warehouse_client

    settings, url = stores, stores.resolved_warehouse_url
    admin, own = warehouse_client(url, "default"), get_warehouse(settings)
    reset_clients(keep=("default",))
    assert warehouse_client(url, "default") is admin
    assert get_warehouse(settings) is not own
    reset_clients()
    assert warehouse_client(url, "default") is not admin
