"""The index of stored keys (stacklens/ingest/stored_key_index.py): the engine's digests equal Python's for
every keyed table, and where the process owns the warehouse the acceptor sends no look-up for new keys while
duplicates and replays are still answered as such."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

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


def test_added_keys_are_held_before_and_after_their_merge() -> None:
    index = StoredKeyIndex()
    index._loaded = True  # an empty warehouse, loaded
    first = [key_digest(1, "events", f"1:{n}") for n in range(MERGE_AT - 1)]
    index.add(first)
    assert all(index.may_hold(d) for d in first[:100])
    index.add([key_digest(1, "events", "1:last")])  # the set reaches MERGE_AT: merged into the sorted array
    assert not index._recent and len(index._sorted) == MERGE_AT
    assert all(index.may_hold(d) for d in first[-100:]) and index.may_hold(key_digest(1, "events", "1:last"))
    assert not index.may_hold(key_digest(1, "events", "1:other"))


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
