"""The writer's look-ups of landed batches: a batch recorded twice (a drain retried after a crash) answers
with its latest record, as the table's own FINAL would."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.ingest import writer
from stacklens.ingest.writer import BATCH_COLUMNS, BatchRecord, batch_row, insert_encoded


def _record(batch_id: str, accepted: int) -> BatchRecord:
    return BatchRecord(batch_id, lines=3, accepted=accepted, duplicates=3 - accepted, skipped=0, rejected=[])


def test_a_batch_recorded_twice_answers_with_its_latest_record(warehouse: Client) -> None:
    # Inserted out of order, in separate parts (their own tokens): the later version arrives first.
    later = batch_row(7, _record("twice", 2), "2026-11-26 10:00:05.000")
    earlier = batch_row(7, _record("twice", 1), "2026-11-26 10:00:00.000")
    once = batch_row(7, _record("once", 3), "2026-11-26 10:00:00.000")
    insert_encoded(warehouse, "ingest_batches", BATCH_COLUMNS, [later], "t1")
    insert_encoded(warehouse, "ingest_batches", BATCH_COLUMNS, [earlier, once], "t2")
    insert_encoded(
        warehouse,
        "ingest_batches",
        BATCH_COLUMNS,
        [batch_row(8, _record("twice", 0), "2026-11-26 11:00:00.000")],
        "t3",
    )

    found = writer.look_up(warehouse, {7: ["twice", "once", "never"]}, {}).batches
    assert set(found) == {(7, "twice"), (7, "once")}
    assert found[(7, "twice")].accepted == 2 and found[(7, "once")].accepted == 3
    final = warehouse.query(
        "SELECT accepted FROM ingest_batches FINAL WHERE org_id = 7 AND batch_id = 'twice'"
    )
    assert final.result_rows == [(found[(7, "twice")].accepted,)]
    assert writer.find_batch(warehouse, 7, "twice") == found[(7, "twice")]


def test_a_look_up_of_thousands_of_keys_goes_as_parameters(warehouse: Client) -> None:
    # 10,000 session keys written in would pass the engine's max_query_size (256 KiB); as parameters, not.
    keys = [(1, f"{uuid.uuid4().hex}:{n}:errored") for n in range(10_000)]
    found = writer.stored_keys(warehouse, {(7, "sessions"): keys, (7, "events"): [(1, uuid.uuid4().hex)]})
    assert found == {(7, "sessions"): set(), (7, "events"): set()}


class Counting:
    """A warehouse client that counts the statements sent through it."""

    def __init__(self, client: Client) -> None:
        self.client, self.statements = client, 0

    def query(self, *args: object, **kwargs: object) -> object:
        self.statements += 1
        return self.client.query(*args, **kwargs)


def test_a_groups_replays_and_duplicates_are_one_statement(warehouse: Client) -> None:
    # A recorded batch whose figures hold quotes, a backslash and non-ASCII text, and a stored log record:
    # one statement finds both, and the figures come back as recorded.
    rejected = [{"line": 2, "error": 'bad "quote" \\ and é'}]
    record = BatchRecord("it's", 3, 1, 1, 0, rejected, body_hash="abc")
    insert_encoded(
        warehouse, "ingest_batches", BATCH_COLUMNS, [batch_row(7, record, "2026-11-26 10:00")], "b"
    )
    # Timed now: a record at the epoch is past the logs' retention, and the engine's TTL may drop it.
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    row = {"org_id": 7, "project_id": 1, "dedup_key": "seen", "timestamp": now, "observed": now}
    writer.insert_rows(warehouse, "logs", [row], "l")
    counting = Counting(warehouse)

    found = writer.look_up(
        counting,
        {7: ["it's", "other"], 8: ["it's"]},
        {(7, "logs"): [(1, "seen"), (1, "new")], (7, "events"): [(1, uuid.uuid4().hex)]},
    )
    assert counting.statements == 1
    assert found.batches == {(7, "it's"): record}
    assert found.keys == {(7, "logs"): {"1:seen"}, (7, "events"): set()}
    assert writer.look_up(counting, {}, {}) == writer.Found({}, {})
    assert counting.statements == 1  # nothing to ask, no statement
