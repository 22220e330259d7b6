"""What travels through the front door (:mod:`stacklens.ingest.front_door`): a request's rows waiting
for their accept group (:class:`Landing`), an accept group in the spool (:class:`Spooled`), and how a group's
rows become the journal's inserts, one block per table and partition in landing order."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from stacklens.errors import RateLimited
from stacklens.ingest import writer
from stacklens.ingest.batch_result import BatchResult, IdempotencyKeyReused, replayed
from stacklens.ingest.flush_journal import Insert, Unchecked
from stacklens.ingest.prepared_rows import Prepared, ReadyRow, line_of
from stacklens.ingest.timeparse import format_ms
from stacklens.outcomes.counting import IDEMPOTENCY_KEY_REUSED, INTERNAL
from stacklens.outcomes.managed import ManagedOutcomes

# A flush's rows by (table, columns, partition): each row's encoded bytes and its key (organization, project,
# event id or dedup key), which a journal inserted again looks up; None for spans.
Blocks = dict[tuple[str, tuple[str, ...], str], list[tuple[bytes, "tuple[int, int, str] | None"]]]
# Spans before their transactions (see the module doc), then the rest; batch records last of all.
TABLE_ORDER = ("spans", "transactions", "events", "replays", "replay_segments", "sessions", "logs")


@dataclass
class Landing:
    """One request's prepared rows, waiting for a flush; ``result`` holds its answer once ``done`` is set."""

    org_id: int
    batch_id: str
    keyed: bool  # sent with an Idempotency-Key: a resend is answered from the batch's record
    prepared: Prepared
    received: float
    result: BatchResult
    # Whether the answer reports duplicates (`/api/ingest`): its rows are checked against the warehouse before
    # the answer. An envelope's answer is its event id either way: its rows are checked by the drain (one
    # look-up for a whole drain, not one per request), and against rows not yet drained here.
    counts_duplicates: bool = True
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    queued: float = 0.0
    # Called (in the door's thread) once ``done`` is set: an event loop's request awaits its landing without a
    # thread of its own blocked on ``done``.
    on_done: Callable[[], None] | None = None
    # Spends the request's quotas (raises RateLimited): a keyed batch's, called by the accept group once its
    # replay look-up found no earlier landing (a resent batch costs no quota). None: spent before.
    take: Callable[[], None] | None = None
    # The request's outcomes, resolved once when the landing ends (finish): accepted once its rows are in the
    # spool, else under its refusal (stacklens.outcomes.managed). None: counted by whoever made the landing.
    outcomes: ManagedOutcomes | None = None
    # Why the door failed the landing (an outcome's reason: spool or warehouse unavailable), with ``error``.
    failure: str = ""

    def spend(self) -> bool:
        """Spend the quotas still to spend; whether the rows may land (else ``error`` holds the refusal)."""
        if self.take is None:
            return True
        try:
            self.take()
        except Exception as exc:  # noqa: BLE001 - the refusal (429, or a store that failed) is this request's
            self.error = exc
            return False
        return True

    def finish(self) -> None:
        """The door is done with the landing: its outcomes resolved, then its request told."""
        if self.outcomes is not None and not self.outcomes.resolved:
            self._resolve(self.outcomes)
        self.done.set()
        if self.on_done is not None:
            self.on_done()

    def _resolve(self, outcomes: ManagedOutcomes) -> None:
        error = self.error
        if error is None:
            if self.result.replayed:
                outcomes.forget()  # counted when the batch first landed
            else:
                outcomes.accept()
        elif isinstance(error, RateLimited):  # a keyed batch's quota, spent in its accept group
            outcomes.refuse("rate_limited", error.reason)
        elif isinstance(error, IdempotencyKeyReused):
            outcomes.refuse("invalid", IDEMPOTENCY_KEY_REUSED)
        else:
            outcomes.refuse("invalid", self.failure or INTERNAL)

    def answer(self) -> BatchResult:
        """The result once ``done`` is set, or the refusal it met."""
        if self.error is not None:
            raise self.error
        return self.result

    @property
    def rows(self) -> int:
        return sum(len(rows) for rows in self.prepared.tables.values()) + 1


@dataclass(frozen=True)
class Spooled:
    """An accept group in the spool: its journal, its inserts, and the keys and batches it holds."""

    name: str
    inserts: list[Insert]
    keys: dict[tuple[int, str], set[str]]
    batches: tuple[tuple[int, str], ...]
    queued: float
    unchecked: list[Unchecked] = field(default_factory=list)
    seq: int = 0  # the group's number in the spool (FrontDoor.settle_spooled)
    waiters: tuple[Landing, ...] = ()  # requests answered once this group has landed (an idle door's)
    attempted: bool = False  # tried before (a failed drain, a journal found at start): see FrontDoor.drain
    weight: int = -1  # rows counted in the front door's queue when it was spooled (default: its rows)
    # The projects whose events a merge held back in this group (stacklens.ingest.project_holds): it waits in
    # the spool until none of them is held.
    held: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.weight < 0:
            object.__setattr__(self, "weight", self.rows)

    @property
    def rows(self) -> int:
        return sum(len(insert.rows) for insert in self.inserts)


def inserts_of(name: str, blocks: Blocks, batch_rows: list[bytes]) -> list[Insert]:
    """A flush's inserts in landing order (spans before transactions; batch records last), each with a token
    of the flush, the table and the partition."""
    order = {table: n for n, table in enumerate(TABLE_ORDER)}
    inserts: list[Insert] = []
    for (table, columns, partition), rows in sorted(blocks.items(), key=lambda b: (order[b[0][0]], b[0][2])):
        token = f"{name}:{table}:{partition}:{len(inserts)}"
        keys = tuple(key for _, key in rows)
        kept = keys if None not in keys else ()  # spans have no key of their own (their transaction's)
        inserts.append(Insert(table, columns, tuple(row for row, _ in rows), token, partition, kept))  # type: ignore[arg-type]
    if batch_rows:
        token = f"{name}:ingest_batches:{len(inserts)}"
        inserts.append(Insert("ingest_batches", tuple(writer.BATCH_COLUMNS), tuple(batch_rows), token))
    return inserts


def received_now(row: bytes) -> bytes:
    """A batch record (an ``ingest_batches`` JSONEachRow line) with its receive time set to now."""
    record = orjson.loads(row)
    record["received_at"] = format_ms(time.time())
    return orjson.dumps(record)


def answer_replay(landing: Landing, record: writer.BatchRecord) -> None:
    try:
        landing.result = replayed(record, landing.prepared.body_hash)
    except Exception as exc:  # noqa: BLE001 - the refusal (409) is this request's answer alone
        landing.error = exc


def keep_fresh(
    landing: Landing,
    known: dict[tuple[int, str], set[str]],
    blocks: Blocks | None,
    added: defaultdict[tuple[int, str], set[str]],
    unchecked: list[Unchecked],
) -> None:
    """Count ``landing``'s rows as accepted or duplicates and add its new rows to the flush's ``blocks`` (or,
    with ``blocks`` None, to ``unchecked``: the drain looks them up in the warehouse).

    ``known`` holds the keys stored or spooled before and is extended with each kept row, so the same event in
    two requests lands once (the first request's) and the second counts it a duplicate.
    """
    prepared, result = landing.prepared, landing.result
    fresh_tables: dict[str, list[ReadyRow]] = {}
    for table, rows in prepared.tables.items():
        seen = known.setdefault((landing.org_id, table), set())
        kept: list[ReadyRow] = []
        for row in rows:
            key = f"{row[1]}:{row[2]}"
            if key not in seen:
                seen.add(key)
                added[(landing.org_id, table)].add(key)
                kept.append(row)
        fresh_tables[table] = kept
        result.duplicates += len(rows) - len(kept)
    span_columns = tuple(prepared.columns["spans"]) if "spans" in prepared.columns else None
    for table, kept in fresh_tables.items():
        if kept:
            columns = tuple(prepared.columns[table])
            if blocks is None:
                unchecked.append(Unchecked(landing.org_id, table, columns, span_columns, tuple(kept)))
            else:
                add_blocks(landing.org_id, table, columns, span_columns, kept, blocks)
        if table == "sessions":
            continue  # counted per line below
        for app_key_id, *_ in kept:
            result.events_by_app_key[app_key_id] = result.events_by_app_key.get(app_key_id, 0) + 1
        result.accepted += len(kept)
    _count_session_lines(prepared.tables.get("sessions") or [], fresh_tables.get("sessions") or [], result)


def add_blocks(
    org_id: int,
    table: str,
    columns: tuple[str, ...],
    span_columns: tuple[str, ...] | None,
    rows: list[ReadyRow] | tuple[ReadyRow, ...],
    blocks: Blocks,
) -> None:
    """Add ``rows`` of ``table`` (and their spans) to a flush's blocks, by table, columns and partition."""
    for row in rows:
        blocks[(table, columns, row[5])].append((row[3], (org_id, row[1], row[2])))
        children, child_partitions = row[4], row[6]
        if children and span_columns is not None:
            for partition, child in zip(child_partitions, children, strict=True):
                blocks[("spans", span_columns, partition)].append((child, None))


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
