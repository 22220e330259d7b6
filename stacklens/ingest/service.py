"""One shipper batch from its body to landed rows: decode, prepare, limit, deduplicate, write.

Framework-free: the HTTP route authenticates; this module has the batch's lines prepared (in this thread or
by the ingest workers, :mod:`stacklens.ingest.prepare`) and lands them. Per-line problems go to
``rejected`` and never fail the batch (DESIGN §4.2).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stacklens.errors import ApplicationNotFound, Conflict, InvalidInput
from stacklens.ingest import writer
from stacklens.ingest.decode import body_digest, decode_body, decode_error, split_lines
from stacklens.ingest.prepare import Attribution as Attribution  # re-exported: `resolve` returns it
from stacklens.ingest.prepare import (
    BatchContext,
    OriginalFrames,
    Prepared,
    ReadyRow,
    line_of,
    prepare_lines,
    prepare_numbered,
)
from stacklens.ingest.timeparse import format_ms
from stacklens.ingest.workers import (
    POOL_MIN_RAW_BYTES,
    AppKeyResolver,
    DecodeFailure,
    estimated_raw_bytes,
    pool_for,
)
from stacklens.settings import Settings
from stacklens.sourcemaps.grouping import SourceMapGrouping
from stacklens.warehouse.client import get_warehouse

# Starts preparing a batch (its context, and what gives original frames for grouping) and returns the call
# that waits for it.
Begin = Callable[[BatchContext, OriginalFrames], Callable[[], Prepared]]

IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_\-:.]{1,128}$")
MAX_REJECTED_REPORTED = 1000  # the answer lists at most this many line errors (the count stays exact)


class IdempotencyKeyReused(Conflict):
    """The Idempotency-Key of a landed batch came again with another body."""


@dataclass
class BatchResult:
    batch_id: str
    accepted: int = 0
    duplicates: int = 0
    skipped: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)
    replayed: bool = False
    events_by_app_key: dict[int, int] = field(default_factory=dict)

    def answer(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "rejected": self.rejected[:MAX_REJECTED_REPORTED],
        }


def batch_id_for(idempotency_key: str | None) -> str:
    if idempotency_key is None:
        return uuid.uuid4().hex
    key = idempotency_key.strip()
    if not IDEMPOTENCY_KEY.match(key):
        raise InvalidInput("Idempotency-Key must be 1-128 characters of [A-Za-z0-9_-:.]")
    return key


def ingest_body(
    settings: Settings,
    org_id: int,
    body: bytes,
    content_encoding: str | None,
    *,
    header_app_key: str | None,
    idempotency_key: str | None,
    take_events: Callable[[int], None],
) -> BatchResult:
    """Land one request body as received (compressed or not); raises :class:`DecodeError` for a bad body.

    Large bodies are prepared by the ingest worker processes (:mod:`stacklens.ingest.workers`), the rest
    in this thread; both land the same rows.
    """
    resolve = AppKeyResolver(settings, org_id)
    pool = pool_for(settings)

    def in_process(context: BatchContext, originals: OriginalFrames) -> Prepared:
        return prepare_body(decode_body(body, content_encoding), context, resolve, originals)

    def begin(context: BatchContext, originals: OriginalFrames) -> Callable[[], Prepared]:
        if pool is None or estimated_raw_bytes(body, content_encoding) < POOL_MIN_RAW_BYTES:
            return lambda: in_process(context, originals)
        collect = pool.submit(body, content_encoding, context, resolve)

        def finish() -> Prepared:
            prepared = collect()
            if isinstance(prepared, DecodeFailure):
                raise decode_error(prepared.status, prepared.message)
            if prepared is None:
                return in_process(context, originals)
            if prepared.deferred:
                # Events whose source maps may give original frames: grouped here, where the maps are.
                prepared.merge(prepare_numbered(prepared.deferred, context, resolve, originals))
                prepared.deferred = []
            return prepared

        return finish

    return _ingest(settings, org_id, idempotency_key, header_app_key, begin, take_events)


def ingest_batch(
    settings: Settings,
    org_id: int,
    data: bytes,
    *,
    header_app_key: str | None,
    idempotency_key: str | None,
    resolve: Callable[[str], Attribution | None],
    take_events: Callable[[int], None],
) -> BatchResult:
    """Land one decoded batch in this thread. ``take_events(n)`` spends the organization's quota or raises."""
    return _ingest(
        settings,
        org_id,
        idempotency_key,
        header_app_key,
        lambda context, originals: lambda: prepare_body(data, context, resolve, originals),
        take_events,
    )


def prepare_body(
    data: bytes,
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    originals: OriginalFrames | None = None,
) -> Prepared:
    """A whole decoded body prepared in this thread, with its digest (for Idempotency-Key conflicts)."""
    prepared = prepare_lines(split_lines(data), 1, context, resolve, originals)
    prepared.body_hash = body_digest(data)
    return prepared


def _ingest(
    settings: Settings,
    org_id: int,
    idempotency_key: str | None,
    header_app_key: str | None,
    begin: Begin,
    take_events: Callable[[int], None],
) -> BatchResult:
    """``begin(context, originals)`` starts preparing the batch and returns the call that waits for it: the
    replay look-up runs while worker processes prepare (its answer is rare; its wait is every batch's).

    The organization's source-map index (cached in the process) rides in the context, so events that may
    have a map are grouped by their original frames (:mod:`stacklens.sourcemaps.grouping`).
    """
    batch_id = batch_id_for(idempotency_key)
    client = get_warehouse(settings)
    received = time.time()
    maps = SourceMapGrouping(client, org_id)
    context = BatchContext(
        org_id,
        batch_id,
        received,
        header_app_key,
        settings.retention_days,
        maps.index(),
        settings.log_retention_days,
    )
    finish = begin(context, maps)
    # Looked up while the workers prepare; a replay still waits for them, for the body's digest.
    landed = writer.find_batch(client, org_id, batch_id) if idempotency_key is not None else None
    prepared = finish()
    if landed is not None:
        return _replayed(landed, prepared.body_hash)
    result = BatchResult(batch_id, skipped=prepared.skipped, rejected=prepared.rejected)
    if prepared.stored and not prepared.attributed:
        raise ApplicationNotFound(
            "no line of the batch belongs to a project of this "
            "organization; check the app key (stacklens_app_…), not the API key"
        )
    if not prepared.attributed and not result.skipped and result.rejected:
        result.rejected.sort(key=lambda r: r["line"])
        raise InvalidInput(
            f"no line of the batch could be read; line "
            f"{result.rejected[0]['line']}: {result.rejected[0]['error']}"
        )
    take_events(prepared.attributed)
    with writer.org_lock(org_id):
        if idempotency_key is not None:
            landed = writer.find_batch(client, org_id, batch_id)
            if landed is not None:
                return _replayed(landed, prepared.body_hash)
        _land(client, org_id, batch_id, prepared, result)
        result.rejected.sort(key=lambda r: r["line"])
        record = writer.BatchRecord(
            batch_id,
            prepared.lines,
            result.accepted,
            result.duplicates,
            result.skipped,
            result.rejected[:MAX_REJECTED_REPORTED],
            prepared.body_hash,
        )
        writer.record_batch(client, org_id, record, format_ms(received))
    return result


def _land(client: Any, org_id: int, batch_id: str, prepared: Prepared, result: BatchResult) -> None:
    """Insert the rows whose event id is new: spans first, then their transactions, then events, replays and
    sessions (whose rows are new by their ``dedup_key``).

    Every insert is one partition of one table with a token of batch + body digest + table + partition, so
    a request that fails half-way (engine error, crash) and is resent under the same Idempotency-Key lands
    exactly the blocks that are missing: a transaction row found by the duplicate check has its spans in
    already. The digest keeps another body sent under the key of a batch that never finished landing from
    being mistaken for that batch's blocks.
    """
    token = f"{org_id}:{batch_id}:{prepared.body_hash}"
    spans: list[tuple[str, bytes]] = []
    fresh_tables, result.duplicates = writer.drop_duplicates(client, org_id, prepared.tables)
    for table, fresh in fresh_tables.items():
        if table == "sessions":
            continue  # counted per line below
        for app_key_id, _, _, _, children, _, child_partitions in fresh:
            result.events_by_app_key[app_key_id] = result.events_by_app_key.get(app_key_id, 0) + 1
            spans.extend(zip(child_partitions, children, strict=True))
        result.accepted += len(fresh)
    _count_session_lines(prepared.tables.get("sessions") or [], fresh_tables.get("sessions") or [], result)
    if spans:
        writer.insert_by_partition(client, "spans", prepared.columns["spans"], spans, f"{token}:spans")
    for table in ("transactions", "events", "replays", "replay_segments", "sessions", "logs"):
        fresh = fresh_tables.get(table) or []
        if fresh:
            writer.insert_by_partition(
                client,
                table,
                prepared.columns[table],
                ((row[5], row[3]) for row in fresh),
                f"{token}:{table}",
            )


def _count_session_lines(rows: list[ReadyRow], fresh: list[ReadyRow], result: BatchResult) -> None:
    """Sessions count per line, as every other item: an aggregate line is many rows (one per bucket and
    status). A line with a new row is accepted; one whose rows were all stored already is a duplicate."""
    if not rows:
        return
    lines = {line_of(row[2]) for row in rows}
    landed: dict[str, int] = {}
    for app_key_id, _, key, *_ in fresh:
        landed.setdefault(line_of(key), app_key_id)
    result.duplicates += len(lines) - len(landed) - (len(rows) - len(fresh))
    result.accepted += len(landed)
    for app_key_id in landed.values():
        result.events_by_app_key[app_key_id] = result.events_by_app_key.get(app_key_id, 0) + 1


def _replayed(landed: writer.BatchRecord, body_hash: str) -> BatchResult:
    """The first answer of a batch sent again; a different body under the same key is refused (409)."""
    if landed.body_hash and body_hash and landed.body_hash != body_hash:
        raise IdempotencyKeyReused(
            f'the Idempotency-Key "{landed.batch_id}" was already used for a batch with a different body; '
            "a resend must repeat the body exactly, and a new batch needs a new key",
        )
    return BatchResult(
        landed.batch_id, landed.accepted, landed.duplicates, landed.skipped, landed.rejected, True
    )
