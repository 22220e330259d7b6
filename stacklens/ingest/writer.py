"""Landing rows in the warehouse exactly once: per batch, per event id, per insert block.

Three layers, because each covers a failure the others cannot:
- ``ingest_batches`` answers a resent batch (same ``Idempotency-Key``) with its first figures, landing
  nothing;
- event ids (for sessions, their ``dedup_key``) already stored are dropped before the insert (the same event
  inside two different batches, e.g. after the shipper's tracker file was removed);
- every insert holds one partition (month) of one table and carries ``insert_deduplication_token`` =
  batch + body digest + table + partition, so a retry after a failure between two inserts lands exactly the
  blocks that did not land (the tables keep a non-replicated deduplication window). One partition per insert
  also means no batch can hit the engine's ``max_partitions_per_insert_block``, whatever times its lines
  carry.
A transaction's spans are inserted before the transactions: the transaction row is what the duplicate
check looks for, so it is only found once its spans are in (docs/decisions.md, "Landing a batch").
The check and the insert run under a per-organization lock, so two concurrent requests of one organization
cannot both pass the check; across processes, ReplacingMergeTree and ``uniqExact(event_id)`` readers cover
the remaining window (docs/decisions.md).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.query import QueryResult

from stacklens.blocking import may_block
from stacklens.warehouse.queries import identifier, inlined, load_query, numbered

# Table → the named query finding its stored keys. Table names only ever come from here, never from input.
# Replay tables are keyed by (replay id, segment id), compared as "<uuid>:<segment>" text.
STORED_KEYS = {
    "events": "ingest/stored_event_ids",
    "transactions": "ingest/stored_event_ids",
    "replays": "ingest/stored_replay_keys",
    "replay_segments": "ingest/stored_replay_keys",
    # Sessions have no event id: each row's key says what makes it the same row (stacklens.ingest.sessions).
    "sessions": "ingest/stored_dedup_keys",
    # Log records neither: the key is a digest of the record as sent (stacklens.ingest.logs).
    "logs": "ingest/stored_dedup_keys",
}
_ID_CHUNK = 5000
Row = tuple[Any, ...]

_org_locks: defaultdict[int, threading.Lock] = defaultdict(threading.Lock)
_org_locks_guard = threading.Lock()


def org_lock(org_id: int) -> threading.Lock:
    """The in-process lock serialising check + insert for one organization."""
    with _org_locks_guard:
        return _org_locks[org_id]


@dataclass(frozen=True)
class BatchRecord:
    batch_id: str
    lines: int
    accepted: int
    duplicates: int
    skipped: int
    rejected: list[dict[str, Any]]
    body_hash: str = ""  # digest of the decompressed body; '' for batches recorded before it was kept


def find_batch(client: Client, org_id: int, batch_id: str) -> BatchRecord | None:
    """The recorded figures of a batch that already landed, else ``None``."""
    return look_up(client, {org_id: [batch_id]}, {}).batches.get((org_id, batch_id))


@dataclass(frozen=True)
class Found:
    """What a look-up found: landed batches by ``(org, batch id)``, stored keys by ``(org, table)``."""

    batches: dict[tuple[int, str], BatchRecord]
    keys: dict[tuple[int, str], set[str]]


# The name a batch record's rows carry in a look-up (batch_records.sql); never one of STORED_KEYS' tables.
BATCH_RECORDS = "ingest_batches"


def look_up(
    client: Client,
    batches: dict[int, list[str]],
    keys: dict[tuple[int, str], Iterable[tuple[int, str]]],
) -> Found:
    """Which of ``batches`` (organization → batch ids) landed, with their figures, and which of ``keys`` are
    stored (as :func:`stored_keys`), in one statement: the front door's acceptor asks both for every keyed
    request of a flush. On the embedded engine a small select costs ~1.6–2 ms, ~0.5 ms of it the statement's
    own (parse and plan), which one statement for both pays once."""
    selects: list[str] = []
    parameters: dict[str, Any] = {}
    query = load_query("ingest/batch_records")
    for org_id, batch_ids in batches.items():
        n = len(selects)
        selects.append(numbered(query, n))
        parameters.update({f"org{n}": org_id, f"batches{n}": sorted(set(batch_ids))})
    _key_selects(keys, selects, parameters)
    found = Found({}, {key: set() for key in keys})
    if not selects:
        return found
    may_block("a warehouse look-up")
    latest: dict[tuple[int, str], int] = {}
    for name, org_id, number, text in _look_up(client, " UNION ALL ".join(selects), parameters).result_rows:
        if name != BATCH_RECORDS:
            found.keys[(int(org_id), name)].add(f"{number}:{text}")
            continue
        batch_id, lines, accepted, duplicates, skipped, rejected, body_hash = orjson.loads(text)
        key = (int(org_id), batch_id)
        # Of a batch recorded twice, the latest row (its version, received_at in ms: batch_records.sql).
        if latest.get(key, -1) <= number:
            latest[key] = number
            found.batches[key] = BatchRecord(
                batch_id,
                int(lines),
                int(accepted),
                int(duplicates),
                int(skipped),
                json.loads(rejected or "[]"),
                body_hash,
            )
    return found


# Look-ups of more keys than this go with server-side parameters: written in, ~2 ms no longer matters, and the
# engine's max_query_size (256 KiB) counts literals but not parameters (keys are at most ~130 characters).
INLINED_MAX_VALUES = 1_000


def _look_up(client: Client, text: str, parameters: dict[str, Any]) -> QueryResult:
    """A front-door look-up with its parameters written in (:func:`inlined` says why) while it holds few keys;
    a large one, or one with a value not of its type, goes to the engine as parameters (whose refusal says
    what is wrong with a value)."""
    values = sum(len(value) for value in parameters.values() if isinstance(value, list))
    if values > INLINED_MAX_VALUES:
        return client.query(text, parameters=parameters)
    try:
        statement = inlined(text, parameters)
    except ValueError:
        return client.query(text, parameters=parameters)
    return client.query(statement)


def existing_event_ids(
    client: Client, org_id: int, keys: dict[str, Iterable[tuple[int, str]]]
) -> dict[str, set[str]]:
    """Per table, which of its ``(project_id, event_id)`` keys are already stored, as ``"project:id"``."""
    found = stored_keys(client, {(org_id, table): table_keys for table, table_keys in keys.items()})
    return {table: found[(org_id, table)] for table in keys}


def stored_keys(
    client: Client, keys: dict[tuple[int, str], Iterable[tuple[int, str]]]
) -> dict[tuple[int, str], set[str]]:
    """Per ``(organization, table)``, which of its ``(project_id, event_id)`` keys are already stored, as
    ``"project:id"``.

    One query for every organization, table and project of a flush (a ``UNION ALL``): each statement costs
    the engine its own parse and plan whatever it reads (its parameters written in by
    :func:`~stacklens.warehouse.queries.inlined`), and the embedded engine runs one statement at a time.
    """
    return look_up(client, {}, keys).keys


def _key_selects(
    keys: dict[tuple[int, str], Iterable[tuple[int, str]]], selects: list[str], parameters: dict[str, Any]
) -> None:
    """Add to ``selects`` a numbered copy of its table's query for each project (and chunk) of ``keys``."""
    for (org_id, table), table_keys in keys.items():
        query = load_query(STORED_KEYS[identifier(table, STORED_KEYS)])
        by_project: defaultdict[int, list[str]] = defaultdict(list)
        for project_id, event_id in table_keys:
            by_project[project_id].append(event_id)
        for project_id, ids in by_project.items():
            for start in range(0, len(ids), _ID_CHUNK):
                n = len(selects)
                selects.append(numbered(query, n))
                chunk = ids[start : start + _ID_CHUNK]
                parameters.update(
                    {f"table{n}": table, f"org{n}": org_id, f"project{n}": project_id, f"ids{n}": chunk}
                )


def drop_duplicates(
    client: Client, org_id: int, tables: dict[str, list[Row]]
) -> tuple[dict[str, list[Row]], int]:
    """Per table, the rows whose event id is new (to the table and within the batch); and how many were
    dropped in all.

    Rows are tuples whose second and third items are the project id and the event id (the prepared rows
    of :mod:`stacklens.ingest.prepare`).
    """
    seen = existing_event_ids(
        client, org_id, {table: [(row[1], row[2]) for row in rows] for table, rows in tables.items() if rows}
    )
    fresh: dict[str, list[Row]] = {}
    dropped = 0
    for table, rows in tables.items():
        known = seen.get(table, set())
        kept = fresh[table] = []
        for row in rows:
            key = f"{row[1]}:{row[2]}"
            if key not in known:
                known.add(key)
                kept.append(row)
        dropped += len(rows) - len(kept)
    return fresh, dropped


# How every encoded insert reads its rows (bench/drain_insert.py compares them with the parallel parser).
INSERT_SETTINGS: Mapping[str, Any] = {
    "input_format_skip_unknown_fields": 0,
    "date_time_input_format": "best_effort",
    "input_format_json_read_objects_as_strings": 1,
    # One thread parses the block: the parallel parser's threads and chunks cost the embedded engine 10-20 %
    # more CPU for the drains' blocks of a few hundred to a thousand rows (bench/RESULTS.md).
    "input_format_parallel_parsing": 0,
}


def insert_rows(client: Client, table: str, rows: list[dict[str, Any]], token: str) -> None:
    """Insert with a deduplication token, so the same block sent again lands once."""
    if rows:
        insert_encoded(client, table, list(rows[0].keys()), [orjson.dumps(row) for row in rows], token)


def insert_encoded(client: Client, table: str, columns: list[str], rows: list[bytes], token: str) -> None:
    """Insert rows already encoded as ``JSONEachRow`` lines, with a deduplication token (see module doc)."""
    if not rows:
        return
    client.raw_insert(
        table,
        column_names=columns,
        insert_block=b"\n".join(rows) + b"\n",
        fmt="JSONEachRow",
        settings={**INSERT_SETTINGS, "insert_deduplication_token": token},
    )


def insert_by_partition(
    client: Client, table: str, columns: list[str], rows: Iterable[tuple[str, bytes]], token: str
) -> None:
    """Insert ``(partition, JSONEachRow line)`` pairs, one insert per partition, each with its own token
    (``token:partition``): see the module doc for why both."""
    by_partition: defaultdict[str, list[bytes]] = defaultdict(list)
    for partition, row in rows:
        by_partition[partition].append(row)
    for partition in sorted(by_partition):
        insert_encoded(client, table, columns, by_partition[partition], f"{token}:{partition}")


def batch_row(org_id: int, record: BatchRecord, received_at: str) -> bytes:
    """A batch's ``ingest_batches`` row, encoded as a ``JSONEachRow`` line."""
    return orjson.dumps(
        {
            "org_id": org_id,
            "batch_id": record.batch_id,
            "received_at": received_at,
            "lines": record.lines,
            "accepted": record.accepted,
            "duplicates": record.duplicates,
            "skipped": record.skipped,
            "rejected": json.dumps(record.rejected, ensure_ascii=False),
            "body_hash": record.body_hash,
        }
    )


BATCH_COLUMNS = [
    "org_id",
    "batch_id",
    "received_at",
    "lines",
    "accepted",
    "duplicates",
    "skipped",
    "rejected",
    "body_hash",
]


def record_batch(client: Client, org_id: int, record: BatchRecord, received_at: str) -> None:
    insert_encoded(
        client,
        "ingest_batches",
        BATCH_COLUMNS,
        [batch_row(org_id, record, received_at)],
        f"{org_id}:{record.batch_id}:ingest_batches",
    )
