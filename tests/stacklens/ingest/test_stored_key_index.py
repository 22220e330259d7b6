"""The index of stored keys (stacklens/ingest/stored_key_index.py): the engine's digests equal Python's for
every keyed table, and where the process owns the warehouse the acceptor sends no look-up for new keys while
duplicates and replays are still answered as such."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime

import numpy as np
import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest import stored_key_index as index_module
from stacklens.ingest import writer
from stacklens.ingest.front_door import front_door, recover_and_index, settle_front_doors
from stacklens.ingest.stored_key_index import (
    BATCHES,
    MERGE_AT,
    StoredKeyIndex,
    key_digest,
    merge_sorted,
    own_warehouse,
    stored_key_index,
)
from stacklens.settings import Settings
from tests.stacklens.ingest.front_door_seed import ORG, PROJECT, count, error_line, land, transaction_line


@pytest.fixture
def owned(settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """``settings`` with this process owning the warehouse (as `stacklens serve` embedded), forgotten
    after (the registries are the test's own)."""
    monkeypatch.setattr(index_module, "_indexes", {})
    assert own_warehouse(settings)
    return settings


class CountingLookUps:
    """Counts the acceptor's warehouse look-ups (writer.look_up), passing each through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[dict, dict]] = []
        real = writer.look_up

        def counted(client: Client, batches: dict, keys: dict) -> writer.Found:
            self.calls.append((batches, keys))
            return real(client, batches, keys)

        monkeypatch.setattr(writer, "look_up", counted)

    def asked(self) -> int:
        """Look-ups that asked the warehouse about at least one key."""
        return sum(1 for batches, keys in self.calls if batches or any(keys.values()))


def test_the_engine_digests_every_keyed_table_as_python_does(settings: Settings, warehouse: Client) -> None:
    event_id, replay_id = uuid.uuid4(), uuid.uuid4()
    rows = {
        "events": f"{PROJECT}:{event_id}",
        "transactions": f"{PROJECT}:{uuid.uuid4()}",
        "replays": f"{PROJECT}:{replay_id}:3",
        "replay_segments": f"{PROJECT}:{replay_id}:4",
        "sessions": f"{PROJECT}:a-session-key",
        "logs": f"{PROJECT}:a-log-key",
    }
    now = datetime.now(UTC)  # each table keeps rows for its retention after their time
    for table, key in rows.items():
        _, text = key.split(":", 1)
        if table.startswith("replay"):
            rid, segment = text.split(":")
            columns, values = ["replay_id", "segment_id", "timestamp"], [rid, int(segment), now]
        elif table == "sessions":
            columns, values = ["dedup_key", "started"], [text, now]
        elif table == "logs":
            columns, values = ["dedup_key", "timestamp"], [text, now]
        else:
            columns, values = ["event_id", "timestamp"], [text, now]
        warehouse.insert(table, [[ORG, PROJECT, *values]], column_names=["org_id", "project_id", *columns])
    warehouse.insert(
        "ingest_batches", [[ORG, "batch-7", now]], column_names=["org_id", "batch_id", "received_at"]
    )

    # The keys as the front door's own look-ups spell them: the digests must be of that text.
    found = writer.look_up(
        warehouse, {ORG: ["batch-7"]}, {(ORG, t): [(PROJECT, k.split(":", 1)[1])] for t, k in rows.items()}
    )
    assert {table: keys for (_, table), keys in found.keys.items()} == {t: {k} for t, k in rows.items()}
    assert set(found.batches) == {(ORG, "batch-7")}

    index = StoredKeyIndex()
    assert index.may_hold(key_digest(ORG, "events", "anything"))  # before the load: everything may be stored
    assert index.load(warehouse) == len(rows) + 1
    for table, key in rows.items():
        assert index.may_hold(key_digest(ORG, table, key)), table
        assert not index.may_hold(key_digest(ORG + 1, table, key)), table  # another organization's
    assert index.may_hold(key_digest(ORG, BATCHES, "batch-7"))
    assert not index.may_hold(key_digest(ORG, BATCHES, "batch-8"))
    assert not index.may_hold(key_digest(ORG, "events", f"{PROJECT}:{uuid.uuid4()}"))


def test_added_keys_are_held_before_during_and_after_their_merge() -> None:
    index = StoredKeyIndex()
    assert index.load_digests(np.empty(0, dtype=np.uint64)) == 0  # an empty warehouse, loaded
    first = [key_digest(1, "events", f"1:{n}") for n in range(MERGE_AT - 1)]
    index.add(first)
    assert all(index.may_hold(d) for d in first[:100]) and not index.merging
    index.add([key_digest(1, "events", "1:last")])  # MERGE_AT keys: merged into the sorted array, aside
    assert all(index.may_hold(d) for d in first[-100:]) and index.may_hold(key_digest(1, "events", "1:last"))
    assert index.settle() and not index.merging and index.merges == 1
    assert index.size == MERGE_AT
    assert all(index.may_hold(d) for d in first) and index.may_hold(key_digest(1, "events", "1:last"))
    assert not index.may_hold(key_digest(1, "events", "1:other"))


def test_the_merge_inserts_into_the_sorted_keys_as_a_union_would() -> None:
    rng = np.random.default_rng(7)
    held = np.unique(rng.integers(0, 2**64, 100_000, dtype=np.uint64))
    # New keys, keys already held (a collision, a key stored before the load), repeats among the new, the
    # extremes of the range: the result is the sorted union, each once.
    more = np.concatenate(
        [
            rng.integers(0, 2**64, 5_000, dtype=np.uint64),
            held[::97],
            held[:3],
            np.array([0, 2**64 - 1], np.uint64),
        ]
    )
    more = np.concatenate([more, more[:50]])
    merged = merge_sorted(held, more)
    assert np.array_equal(merged, np.union1d(held, more))
    assert np.array_equal(merge_sorted(np.empty(0, np.uint64), more), np.unique(more))


def test_a_multi_million_index_merges_aside_within_a_bound() -> None:
    # 5 M stored keys (as loaded at start): the merge np.union1d did in the accept step took seconds there
    # and grew with the keys (21.5 s at 10 M). The add that starts it returns at once; the merge ends in time.
    rng = np.random.default_rng(11)
    index = StoredKeyIndex()
    assert index.load_digests(rng.integers(0, 2**64, 5_000_000, dtype=np.uint64)) > 4_990_000
    stored = index.size
    fresh = [int(d) for d in rng.integers(0, 2**64, MERGE_AT, dtype=np.uint64)]
    started = time.monotonic()
    index.add(fresh)
    added = time.monotonic() - started
    assert index.settle(timeout=30)
    merged = time.monotonic() - started
    assert added < 0.2, f"the add waited {added:.3f} s"
    assert merged < 2.0, f"5 M keys merged in {merged:.3f} s"
    assert index.merges == 1 and index.size == stored + len(set(fresh))
    assert all(index.may_hold(d) for d in fresh)


def test_look_ups_during_a_background_merge_find_every_key_added_before_them() -> None:
    # Exactly-once after kill -9 rests on this: a key accepted must never be answered "absent" later, while
    # merges move keys from the recent set to the sorted array in another thread. A reader checks, again and
    # again, every key whose add returned before its check began, across several merges of a 3 M index.
    rng = np.random.default_rng(13)
    index = StoredKeyIndex()
    index.load_digests(rng.integers(0, 2**64, 3_000_000, dtype=np.uint64))
    added: list[int] = []  # appended only after index.add returned
    stop = threading.Event()
    missed: list[int] = []
    checked_during_merge = 0

    def reader() -> None:
        nonlocal checked_during_merge
        while not stop.is_set():
            during = index.merging
            upto = len(added)
            # The newest keys first (the ones in flight between recent, merging and the array), then a sample.
            for digest in added[max(0, upto - 2_000) : upto] + added[:upto:997]:
                if not index.may_hold(digest):
                    missed.append(digest)
            if during and index.merging:
                checked_during_merge += 1

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for _ in range(4 * MERGE_AT // 500):
            chunk = [int(d) for d in rng.integers(0, 2**64, 500, dtype=np.uint64)]
            index.add(chunk)
            added.extend(chunk)
        assert index.settle(timeout=60)
    finally:
        stop.set()
        thread.join()
    assert not missed, f"{len(missed)} keys added were answered absent"
    # (keys added while a merge runs wait for the next one: 200,000 keys make two merges or more)
    assert index.merges >= 2 and checked_during_merge > 0
    assert all(index.may_hold(d) for d in added)
    assert not any(index.may_hold(int(d)) for d in rng.integers(0, 2**64, 1_000, dtype=np.uint64))


def test_with_a_clickhouse_server_the_index_is_never_trusted(settings: Settings) -> None:
    server = settings.model_copy(update={"warehouse_url": "http://127.0.0.1:8123"})
    assert not own_warehouse(server)
    assert not stored_key_index(server).trusted


def test_a_process_that_does_not_own_the_warehouse_keeps_no_digests(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As an API worker of a ClickHouse server: every key is looked up, and the index neither grows nor loads.
    monkeypatch.setattr(index_module, "_indexes", {})
    lookups = CountingLookUps(monkeypatch)
    assert land(settings, error_line(), "unowned").accepted == 1
    assert settle_front_doors()
    recover_and_index(settings)
    index = stored_key_index(settings)
    assert lookups.asked() == 1 and index.size == 0 and not index.trusted


def test_owned_new_keys_skip_the_warehouse_and_repeats_are_still_found(
    owned: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stored before the process indexed them (a previous run's rows): found through the index's load.
    stored_id = uuid.uuid4().hex
    before = error_line(stored_id)
    assert land(owned, before, "before").accepted == 1
    assert settle_front_doors()
    recover_and_index(owned)
    assert stored_key_index(owned).trusted

    lookups = CountingLookUps(monkeypatch)
    bodies = [error_line() for _ in range(5)]
    fresh = [land(owned, body, f"new-{n}") for n, body in enumerate(bodies)]
    fresh.append(land(owned, transaction_line()))
    assert [(r.accepted, r.duplicates, r.replayed) for r in fresh] == [(1, 0, False)] * 6
    assert lookups.asked() == 0  # six requests, none asked the warehouse

    # Repeats of stored rows and of keys spooled now are still answered as such.
    again = land(owned, error_line(stored_id))
    replay = land(owned, before, "before")
    assert settle_front_doors()
    repeat = land(owned, bodies[2], "new-2")
    assert (again.accepted, again.duplicates) == (0, 1)
    assert replay.replayed and replay.accepted == 1
    assert repeat.replayed and repeat.accepted == 1
    assert lookups.asked() == 3  # one per request whose key the index holds
    assert settle_front_doors()
    assert count(warehouse, "events") == 6
    assert count(warehouse, "transactions") == 1
    # What an operator reads (/api/health, the operations page): the index in use, and its size (6 events,
    # 1 transaction, 6 batch records of keyed requests, the transaction's own unkeyed batch).
    status = front_door(owned).status()
    assert status["keys_indexed"] and status["keys_in_index"] >= 13
