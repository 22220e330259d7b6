"""Two independent reads at once, each on its own client of the same embedded warehouse."""

from __future__ import annotations

import time

import clickhouse_connect
from clickhouse_connect.driver.client import Client

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse, release_client, second_client
from stacklens.warehouse.side_by_side import side_by_side


def _slow_read(client: Client) -> tuple[int, int]:
    """A read that waits 0.6 s in the engine, and the client that ran it."""
    value = client.query("SELECT count() FROM numbers(3) WHERE sleepEachRow(0.2) = 0").result_rows[0][0]
    return int(value), id(client)


def test_two_reads_overlap_on_two_clients_of_one_warehouse(settings: Settings) -> None:
    ensure_database(settings)
    client = get_warehouse(settings)
    other = second_client(client)
    assert other is not None and other is not client and second_client(client) is other
    assert other.query("SELECT currentDatabase()").result_rows[0][0] == settings.warehouse_database
    client.command("CREATE TABLE seen (n UInt8) ENGINE = MergeTree ORDER BY n")
    client.command("INSERT INTO seen VALUES (7)")
    assert other.query("SELECT n FROM seen").result_rows == [(7,)]  # the same data, not a copy

    started = time.perf_counter()
    first, second = side_by_side(client, _slow_read, _slow_read)
    took = time.perf_counter() - started
    assert first == (3, id(client)) and second == (3, id(other))
    assert took < 1.0, f"the two 0.6 s reads took {took:.2f} s: they ran one after the other"


def test_a_client_not_handed_out_here_reads_one_after_the_other(settings: Settings) -> None:
    ensure_database(settings)
    shared = get_warehouse(settings)
    own = clickhouse_connect.get_client(
        dsn=settings.resolved_warehouse_url, database=settings.warehouse_database
    )
    try:
        assert second_client(own) is None
        started = time.perf_counter()
        first, second = side_by_side(own, _slow_read, _slow_read)
        assert first == second == (3, id(own)) and time.perf_counter() - started >= 1.1
    finally:
        own.close()
    # Releasing the warehouse closes and forgets both shared clients; the next ones are new.
    other = second_client(shared)
    release_client(settings.resolved_warehouse_url, settings.warehouse_database)
    assert second_client(shared) is None
    again = get_warehouse(settings)
    assert again is not shared and second_client(again) not in (None, other)
