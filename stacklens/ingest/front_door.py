"""The front door: requests' rows spooled together and answered, then landed many requests at a time.

Every entrance (`/api/ingest`, the Sentry envelope and store endpoints, OTLP exports, the tunnel's lines through
the shipper) prepares its rows in the request and hands them here. Each insert into `events` runs every
materialized view behind it (100–200 ms on the embedded engine, whatever its size), so a one-event request that
paid its own insert could not go faster than that; here the cost is shared. Two threads per warehouse:

- the *acceptor* takes every request waiting (a group commit: a lone request goes at once, a busy door groups
  many), answers replays (`Idempotency-Key`) and drops duplicates with one look-up for the whole group (rows
  spooled but not yet landed are checked in memory first, then the warehouse; an envelope's rows are checked
  by the drain instead, see :class:`Landing`), writes the group to its journal
  (:mod:`stacklens.ingest.flush_journal`) and answers its requests;
- the *drainer* takes every group spooled, at most every :data:`DRAIN_INTERVAL_SECONDS` (sooner when many rows
  or a reader wait), and inserts them as one block per table and partition with tokens of the drain (spans
  before their transactions: the transaction row is what the duplicate check finds; batch records last), then
  removes the journals. A journal found again (a failed drain, the next start after a kill) is inserted whole
  with the same tokens: the engine lands exactly the blocks that were missing.

A request is answered once its rows are in the spool (DESIGN §9.1: durable, drained exactly once) — and, when
the door is idle (a lone request: none other waiting, no drain running, nothing spooled), only once its group
has landed: a lone request waits one
insert (~0.1 s) and its event is visible everywhere at its 200, while under load requests are answered from the
spool and their rows land in the next drain, within a second. Reads in this process wait for rows answered
before them (:func:`settle_spooled`), so a user always reads their own writes.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypedDict

import orjson
from clickhouse_connect.driver.client import Client

from stacklens.errors import Unavailable
from stacklens.ingest import writer
from stacklens.ingest.batch_result import BatchResult, replayed
from stacklens.ingest.flush_journal import FlushJournal, Insert, Unchecked
from stacklens.ingest.prepare import Prepared, ReadyRow, line_of
from stacklens.ingest.refusals import note_refusal
from stacklens.ingest.timeparse import format_ms
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse, inserting_client

log = logging.getLogger(__name__)

# A flush's rows by (table, columns, partition): each row's encoded bytes and its key (organization, project,
# event id or dedup key), which a journal inserted again looks up; None for spans.
Blocks = dict[tuple[str, tuple[str, ...], str], list[tuple[bytes, "tuple[int, int, str] | None"]]]
# Spans before their transactions (see the module doc), then the rest; batch records last of all.
TABLE_ORDER = ("spans", "transactions", "events", "replays", "replay_segments", "sessions", "logs")
# Rows a flush takes at most: a flush of a million rows would hold every later request for seconds.
MAX_ROWS_PER_FLUSH = 20_000
# Rows that may wait for a flush before an entrance answers 503 (the queue is full): a burst larger than the
# warehouse can take is refused with Retry-After rather than held in memory.
MAX_ROWS_WAITING = 200_000
# How long a request waits for its flush before it is answered 503 (the warehouse is stuck).
WAIT_SECONDS = 120.0
# A flusher thread with nothing to do for this long ends (a new request starts another).
IDLE_SECONDS = 10.0
# A drain that failed (the warehouse down) is tried again after this long; its rows stay in the spool.
DRAIN_RETRY_SECONDS = 1.0
# How long a reader waits for rows answered before it to land (settle_spooled), at most.
SETTLE_SECONDS = 5.0
# A drain starts at most this often, unless DRAIN_NOW_ROWS rows wait (see _drain_loop).
DRAIN_INTERVAL_SECONDS = 0.25
DRAIN_NOW_ROWS = 5_000
# Flushes per second are counted over this window.
RATE_WINDOW_SECONDS = 10.0


class QueueFull(Unavailable):
    """More rows wait for the warehouse than the front door holds: retry later."""


class FrontDoorStatus(TypedDict):
    requests_waiting: int
    rows_waiting: int
    oldest_waiting_ms: float
    flushes_per_second: float
    rows_spooled: int
    rows_per_flush: float
    requests_per_accept: float
    last_flush_ms: float
    accept_ms: float  # an accept group's look-ups and spool write, on average
    queued_ms: float  # how long a request waited for its accept group to begin, on average
    drain_error: str


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
    # the answer. An envelope's answer is its event id either way: its rows are checked by the drain (one look-up
    # for a whole drain, not one per request), and against rows not yet drained here.
    counts_duplicates: bool = True
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    queued: float = 0.0
    # Called (in the door's thread) once ``done`` is set: an event loop's request awaits its landing without a
    # thread of its own blocked on ``done``.
    on_done: Callable[[], None] | None = None

    def finish(self) -> None:
        self.done.set()
        if self.on_done is not None:
            self.on_done()

    def answer(self) -> BatchResult:
        """The result once ``done`` is set, or the refusal it met."""
        if self.error is not None:
            raise self.error
        return self.result

    @property
    def rows(self) -> int:
        return sum(len(rows) for rows in self.prepared.tables.values()) + 1


class FrontDoor:
    """The acceptor and the drainer of one warehouse (one per process and warehouse; see :func:`front_door`)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.journal = FlushJournal(settings.data_dir / "front_door")
        self._condition = threading.Condition()
        self._waiting: deque[Landing] = deque()
        self._rows_waiting = 0
        self._acceptor: threading.Thread | None = None
        self._drainer: threading.Thread | None = None
        self._spooled: deque[Spooled] = deque()
        self._rows_spooled = 0
        # Keys and batch records spooled but not drained yet: a request that repeats them is a duplicate or a
        # replay before the warehouse holds them. Only the acceptor adds, only the drainer removes.
        self._pending_keys: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        self._pending_batches: dict[tuple[int, str], writer.BatchRecord] = {}
        self._drains: deque[tuple[float, int, float]] = (
            deque()
        )  # (finished at, rows, seconds) of recent drains
        # (finished at, requests, seconds) of recent accept groups
        # (when, requests, seconds accepting, seconds its requests waited for it in all)
        self._accepts: deque[tuple[float, int, float, float]] = deque()
        self._drain_error: str = ""
        self._recovered = False
        self._closing = False
        self._last_drain_started = 0.0
        # Accept groups are numbered as they are spooled; a drain lands every group spooled before it began.
        self._spooled_seq = 0
        self._landed_seq = 0
        self._hurry = False  # a reader waits for the spool (settle_spooled): drain without gathering
        self._in_flight: Spooled | None = None  # the drain being inserted, as it is tried again if it fails
        self._holds = 0  # backups holding the drains (drains_held): requests are answered, rows stay spooled

    @property
    def client(self) -> Client:
        """The look-ups' client (duplicates, replays: short reads), the process's shared one."""
        return get_warehouse(self.settings)

    @property
    def inserter(self) -> Client:
        """The drains' client: a handle of their own, so no read waits behind their inserts."""
        return inserting_client(self.settings)

    # -- the request's side --------------------------------------------------------------------------------

    def land(self, landing: Landing) -> BatchResult:
        """Queue ``landing`` and wait until its rows are spooled; its result, or the refusal."""
        self.submit(landing)
        if not landing.done.wait(WAIT_SECONDS):
            raise Unavailable(f"the front door did not take the rows within {WAIT_SECONDS:g} s; retry")
        return landing.answer()

    def submit(self, landing: Landing) -> None:
        """Queue ``landing`` (refused at once when the queue is full); ``landing.finish()`` tells when its
        rows are spooled, or why not."""
        rows = landing.rows
        with self._condition:
            if not self._recovered:
                self._recover_held()
            waiting = self._rows_waiting + self._rows_spooled
            if waiting and waiting + rows > MAX_ROWS_WAITING:
                note_refusal(
                    self.settings.data_dir, "queue"
                )  # readiness and the service's own alerts read it (stacklens/self_watch)
                raise QueueFull(
                    f"the front door holds {waiting:,} rows waiting for the warehouse; retry shortly"
                )
            landing.queued = time.monotonic()
            self._waiting.append(landing)
            self._rows_waiting += rows
            if self._acceptor is None:
                self._acceptor = threading.Thread(
                    target=self._accept_loop, name="front-door-accept", daemon=True
                )
                self._acceptor.start()
            self._condition.notify_all()

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until every spooled row is in the warehouse (tests, shutdown); whether it is."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._waiting or self._spooled or self._draining:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._condition.wait(min(left, 0.05))
        return True

    _draining = False

    def settle_spooled(self, timeout: float = SETTLE_SECONDS) -> bool:
        """Wait until every row answered before this call is in the warehouse (a reader in this process sees
        its own writes: an event answered 200 is on the next page read); whether it is, within ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._condition:
            target = self._spooled_seq
            while self._landed_seq < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._hurry = True
                self._condition.notify_all()
                self._condition.wait(min(left, 0.05))
        return True

    @contextlib.contextmanager
    def drains_held(self, timeout: float = 60.0) -> Iterator[int]:
        """A cut-off for a backup: every row answered before the call is landed first, then no drain starts
        until the block ends. Requests keep being answered (their rows wait in the spool, durable) and land
        after the block: an event answered 200 is wholly before the cut-off or wholly after it. Yields the rows
        spooled after the cut-off so far (0 at entry, as a rule)."""
        self.recover()  # what a stopped server left in the spool was answered 200: before the cut-off
        if not self.settle_spooled(timeout):
            raise Unavailable(f"the front door did not land its spooled rows within {timeout:g} s; retry")
        deadline = time.monotonic() + timeout
        with self._condition:
            self._holds += 1
            while self._draining:  # a drain of rows answered after the settle: let it finish, it is before
                left = deadline - time.monotonic()
                if left <= 0:
                    self._holds -= 1
                    self._condition.notify_all()
                    raise Unavailable("a front-door drain did not finish in time for the backup; retry")
                self._condition.wait(min(left, 0.05))
            waiting = self._rows_spooled
        try:
            yield waiting
        finally:
            with self._condition:
                self._holds -= 1
                self._hurry = True  # what waited during the hold lands at once
                self._condition.notify_all()

    def close(self, timeout: float = 30.0) -> None:
        """Drain what is spooled (within ``timeout``) and stop the threads; what is left stays in the spool for
        the next start. Called at shutdown: a thread inside the engine while the interpreter exits crashes it."""
        deadline = time.monotonic() + timeout
        with self._condition:
            self._closing = True
            self._condition.notify_all()
            while self._acceptor is not None or self._drainer is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._condition.wait(min(left, 0.1))

    def status(self) -> FrontDoorStatus:
        now = time.monotonic()
        with self._condition:
            oldest = min(
                self._waiting[0].queued if self._waiting else now,
                self._spooled[0].queued if self._spooled else now,
            )
            while self._drains and now - self._drains[0][0] > RATE_WINDOW_SECONDS:
                self._drains.popleft()
            while self._accepts and now - self._accepts[0][0] > RATE_WINDOW_SECONDS:
                self._accepts.popleft()
            drains = len(self._drains)
            return {
                "requests_waiting": len(self._waiting),
                "rows_waiting": self._rows_waiting + self._rows_spooled,
                "rows_spooled": self._rows_spooled,
                "oldest_waiting_ms": round((now - oldest) * 1000, 1),
                "flushes_per_second": round(drains / RATE_WINDOW_SECONDS, 2),
                "rows_per_flush": round(sum(r for _, r, _ in self._drains) / drains, 1) if drains else 0.0,
                "requests_per_accept": round(sum(a[1] for a in self._accepts) / len(self._accepts), 2)
                if self._accepts
                else 0.0,
                "last_flush_ms": round(self._drains[-1][2] * 1000, 1) if drains else 0.0,
                "accept_ms": round(sum(a[2] for a in self._accepts) / len(self._accepts) * 1000, 1)
                if self._accepts
                else 0.0,
                "queued_ms": round(
                    sum(a[3] for a in self._accepts) / max(1, sum(a[1] for a in self._accepts)) * 1000, 1
                ),
                "drain_error": self._drain_error,
            }

    # -- accepting: look-ups and the spool, for every request waiting -------------------------------------

    def _accept_loop(self) -> None:
        while True:
            with self._condition:
                # Woken for other news (a drain ended) the thread waits on: it stops only after a quiet
                # IDLE_SECONDS, not after each group (a thread started per request costs more than its work).
                idle_until = time.monotonic() + IDLE_SECONDS
                while not self._waiting and not self._closing and time.monotonic() < idle_until:
                    self._condition.wait(max(0.0, idle_until - time.monotonic()))
                if not self._waiting:
                    self._acceptor = None
                    self._condition.notify_all()
                    return
                taken: list[Landing] = []
                rows = 0
                while self._waiting and (not taken or rows + self._waiting[0].rows <= MAX_ROWS_PER_FLUSH):
                    landing = self._waiting.popleft()
                    taken.append(landing)
                    rows += landing.rows
                self._rows_waiting -= rows
            started = time.monotonic()
            try:
                spooled = self.accept(taken)
            except Exception as exc:  # noqa: BLE001 - every waiting request gets the group's error
                log.warning("front door: accepting %d requests failed: %s", len(taken), exc)
                if isinstance(exc, OSError):
                    # The spool's journal could not be written (a read-only or full volume): the rows are not
                    # safe anywhere yet, so the senders keep them. The path stays in the log, not the answer.
                    error = Unavailable(f"the ingest spool cannot be written ({exc.strerror or exc}); retry")
                else:
                    error = Unavailable(f"the warehouse did not answer: {str(exc).splitlines()[0][:300]}")
                for landing in taken:
                    landing.error = landing.error or error
                spooled = None
            with self._condition:
                self._accepts.append(
                    (
                        time.monotonic(),
                        len(taken),
                        time.monotonic() - started,
                        sum(started - landing.queued for landing in taken),
                    )
                )
                answer_now = taken
                if spooled is not None:
                    self._spooled_seq += 1
                    # An idle door lands a lone request before answering it (see the module doc): it waits
                    # one insert, and its events are visible everywhere at its 200. A group of several, or
                    # one arriving while others wait or drain, is answered once spooled: holding concurrent
                    # senders until their drain would bind each to the drain's pace (they come back
                    # together, find the door idle again, and wait again). Not while a backup holds the
                    # drains: the request is answered spooled, and lands after it.
                    idle = (
                        len(taken) == 1
                        and not self._waiting
                        and not self._draining
                        and not self._spooled
                        and not self._holds
                    )
                    spooled = replace(spooled, seq=self._spooled_seq, waiters=tuple(taken) if idle else ())
                    answer_now = [] if idle else taken
                    self._hurry = self._hurry or idle
                    self._spooled.append(spooled)
                    self._rows_spooled += spooled.weight
                    if self._drainer is None:
                        self._drainer = threading.Thread(
                            target=self._drain_loop, name="front-door-drain", daemon=True
                        )
                        self._drainer.start()
                    self._condition.notify_all()
            for landing in answer_now:
                landing.finish()

    def accept(self, landings: list[Landing]) -> Spooled | None:
        """Answer replays, drop duplicates and spool the fresh rows of ``landings`` (see the module doc)."""
        keyed: defaultdict[int, list[str]] = defaultdict(list)
        wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
        with self._condition:
            # Pending first, then the warehouse: a key drained between the two reads is found by the second.
            known = {key: set(keys) for key, keys in self._pending_keys.items()}
            records = dict(self._pending_batches)
        for landing in landings:
            if landing.keyed and (landing.org_id, landing.batch_id) not in records:
                keyed[landing.org_id].append(landing.batch_id)
            if landing.counts_duplicates:
                for table, rows in landing.prepared.tables.items():
                    wanted[(landing.org_id, table)].extend((row[1], row[2]) for row in rows)
        if keyed:
            records.update(writer.find_batches(self.client, dict(keyed)))
        fresh: list[Landing] = []
        again: list[tuple[Landing, Landing]] = []  # (a request, the earlier one of this group with its batch)
        first_of: dict[tuple[int, str], Landing] = {}
        for landing in landings:
            key = (landing.org_id, landing.batch_id)
            record = records.get(key)
            if record is not None:
                _answer_replay(landing, record)
            elif key in first_of:
                again.append((landing, first_of[key]))
            else:
                first_of[key] = landing
                fresh.append(landing)
        if any(wanted.values()):
            stored = writer.stored_keys(self.client, {k: v for k, v in wanted.items() if v})
            for key, keys in stored.items():
                known.setdefault(key, set()).update(keys)
        blocks: Blocks = defaultdict(list)
        unchecked: list[Unchecked] = []
        batch_rows: list[bytes] = []
        added: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        batches: dict[tuple[int, str], writer.BatchRecord] = {}
        for landing in fresh:
            _keep_fresh(landing, known, blocks if landing.counts_duplicates else None, added, unchecked)
            record = landing.result.record(landing.prepared.lines, landing.prepared.body_hash)
            batch_rows.append(writer.batch_row(landing.org_id, record, format_ms(landing.received)))
            batches[(landing.org_id, landing.batch_id)] = record
        for landing, first in again:
            _answer_replay(landing, batches[(first.org_id, first.batch_id)])
        if not fresh:
            return None
        name = f"a-{uuid.uuid4().hex}"
        inserts = _inserts(name, blocks, batch_rows)
        self.journal.write(name, inserts, unchecked=unchecked)
        with self._condition:
            for key, keys in added.items():
                self._pending_keys[key].update(keys)
            self._pending_batches.update(batches)
        queued = min(landing.queued for landing in fresh)
        return Spooled(name, inserts, dict(added), tuple(batches), queued, unchecked)

    # -- draining: the spooled rows into the warehouse, many accept groups at once -------------------------

    def _drain_loop(self) -> None:
        while True:
            with self._condition:
                idle_until = time.monotonic() + IDLE_SECONDS
                while not self._spooled and not self._closing and time.monotonic() < idle_until:
                    self._condition.wait(max(0.0, idle_until - time.monotonic()))
                if not self._spooled or (self._closing and self._drain_error):
                    self._drainer = None
                    self._condition.notify_all()
                    return
                if self._holds and not self._closing:
                    # A backup holds the drains (drains_held): the rows stay in the spool, answered and durable.
                    self._condition.wait(0.05)
                    continue
                # Gather for a moment after the last drain began: each drain pays every materialized view
                # once, so fewer, larger drains cost less per row; the wait stays well inside the second in
                # which an answered event must be visible.
                gather_until = self._last_drain_started + DRAIN_INTERVAL_SECONDS
                while (
                    not self._closing
                    and not self._hurry
                    and self._rows_spooled < DRAIN_NOW_ROWS
                    and time.monotonic() < gather_until
                ):
                    self._condition.wait(max(0.0, gather_until - time.monotonic()))
                if self._spooled[0].attempted:
                    # A drain that failed goes again alone, under its own journal and tokens.
                    taken = [self._spooled.popleft()]
                else:
                    taken = list(self._spooled)
                    self._spooled.clear()
                self._draining = True
                self._hurry = False
            started = self._last_drain_started = time.monotonic()
            self._in_flight = None
            try:
                self.drain(taken)
                error = ""
            except Exception as exc:  # noqa: BLE001 - kept and retried: the rows are safe in the spool
                error = str(exc).splitlines()[0][:300]
                log.warning("front door: draining %d spooled groups failed, retrying: %s", len(taken), error)
            with self._condition:
                self._draining = False
                self._drain_error = error
                if error:
                    # Tried again as the drain's own journal (its groups' journals are gone once it was
                    # written), its rows already stored skipped: never under new tokens.
                    retry = self._in_flight
                    if retry is None:
                        self._spooled.extendleft(reversed([replace(g, attempted=True) for g in taken]))
                    else:
                        self._spooled.appendleft(retry)
                else:
                    rows = sum(s.weight for s in taken)
                    self._rows_spooled -= rows
                    self._drains.append((time.monotonic(), rows, time.monotonic() - started))
                    self._landed_seq = max(self._landed_seq, max(spooled.seq for spooled in taken))
                    for spooled in taken:
                        for key, keys in spooled.keys.items():
                            self._pending_keys[key].difference_update(keys)
                            if not self._pending_keys[key]:
                                del self._pending_keys[key]
                        for batch in spooled.batches:
                            self._pending_batches.pop(batch, None)
                self._condition.notify_all()
            # Requests held for their own landing are answered either way: their rows are in the spool, which
            # the next drain (or the next start) lands.
            for spooled in taken:
                for landing in spooled.waiters:
                    landing.finish()
            if error:
                time.sleep(DRAIN_RETRY_SECONDS)

    def drain(self, groups: list[Spooled]) -> None:
        """Insert the rows of ``groups`` together, one insert per table and partition, then forget their
        journals. Rows spooled unchecked are looked up first (one query for the drain) and stored ones dropped.
        The drain's own journal names the groups' journals: found again, it replaces them (flush_journal).
        A group tried before (``attempted``: a failed drain, a journal found at start) skips its rows that are
        stored already: inserted again, their block would be deduplicated by its token but each view behind
        the table would count it a second time."""
        unchecked = [rows for group in groups for rows in group.unchecked]
        again = any(group.attempted for group in groups)
        if len(groups) == 1 and not unchecked:
            self._in_flight = replace(groups[0], attempted=True)
            self._insert_all(groups[0].inserts, again)
            self.journal.remove(groups[0].name)
            return
        name = f"d-{uuid.uuid4().hex}"
        blocks: Blocks = defaultdict(list)
        batch_rows: list[bytes] = []
        for group in groups:
            for insert in group.inserts:
                if insert.table == "ingest_batches":
                    batch_rows.extend(insert.rows)
                else:
                    keys = insert.keys or (None,) * len(insert.rows)
                    blocks[(insert.table, insert.columns, insert.partition)].extend(
                        zip(insert.rows, keys, strict=True)
                    )
        if unchecked:
            wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
            for each in unchecked:
                wanted[(each.org_id, each.table)].extend((row[1], row[2]) for row in each.rows)
            stored = writer.stored_keys(self.inserter, dict(wanted))
            for each in unchecked:
                known = stored[(each.org_id, each.table)]
                fresh = [row for row in each.rows if f"{row[1]}:{row[2]}" not in known]
                _add_blocks(each.org_id, each.table, each.columns, each.span_columns, fresh, blocks)
        inserts = _inserts(name, blocks, batch_rows)
        self.journal.write(name, inserts, tuple(group.name for group in groups))
        merged_keys: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        for group in groups:
            for pending, held in group.keys.items():
                merged_keys[pending] |= held
        self._in_flight = Spooled(
            name,
            inserts,
            dict(merged_keys),
            tuple(batch for group in groups for batch in group.batches),
            min(group.queued for group in groups),
            seq=max(group.seq for group in groups),
            attempted=True,
            weight=sum(group.weight for group in groups),
        )
        for group in groups:
            self.journal.remove(group.name)
        self._insert_all(inserts, again)
        self.journal.remove(name)

    def recover(self) -> None:
        """Land every journal a stopped process left in the spool (a kill, a crash), before any new row."""
        with self._condition:
            if not self._recovered:
                self._recover_held()

    def _recover_held(self) -> None:
        for journal in self.journal.pending():
            log.warning("front door: landing what a stopped server left in the spool (%s)", journal.name)
            # Through a drain: rows spooled unchecked (envelopes') are looked up before they land.
            found = Spooled(
                journal.name, list(journal.inserts), {}, (), 0.0, list(journal.unchecked), attempted=True
            )
            self.drain([found])
        self._recovered = True

    def _insert_all(self, inserts: list[Insert], again: bool = False) -> None:
        """Insert each block with its token; ``again``: skip the rows of each block that are stored already
        (see :meth:`drain`), so a block that landed before is not inserted a second time."""
        stored: dict[tuple[int, str], set[str]] = {}
        if again:
            wanted: defaultdict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
            for insert in inserts:
                for org_id, project_id, key in insert.keys:
                    wanted[(org_id, insert.table)].append((project_id, key))
            stored = writer.stored_keys(self.inserter, dict(wanted)) if wanted else {}
        landed_before = again and any(
            f"{project_id}:{key}" in stored.get((org_id, insert.table), ())
            for insert in inserts
            for org_id, project_id, key in insert.keys
        )
        for insert in inserts:
            rows, token = list(insert.rows), insert.token
            if landed_before and insert.table == "ingest_batches":
                # Rows of this drain landed before it stopped, and the views behind them may have lost their
                # blocks: the batches are recorded as received now, as a resend records them, so the counter
                # repair finds the first attempt dead and makes its counters equal to the stored events
                # (stacklens/issues/counters.py); a resend of a batch is still answered from its record.
                rows, token = [_received_now(row) for row in rows], f"{token}:again"
            if again and insert.keys:
                rows = [
                    row
                    for row, (org_id, project_id, key) in zip(insert.rows, insert.keys, strict=True)
                    if f"{project_id}:{key}" not in stored[(org_id, insert.table)]
                ]
                if not rows:
                    continue  # the block landed before
                if len(rows) < len(insert.rows):
                    token = f"{token}:rest"
            writer.insert_encoded(self.inserter, insert.table, list(insert.columns), rows, token)


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

    def __post_init__(self) -> None:
        if self.weight < 0:
            object.__setattr__(self, "weight", self.rows)

    @property
    def rows(self) -> int:
        return sum(len(insert.rows) for insert in self.inserts)


def _inserts(name: str, blocks: Blocks, batch_rows: list[bytes]) -> list[Insert]:
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


def _received_now(row: bytes) -> bytes:
    """A batch record (an ``ingest_batches`` JSONEachRow line) with its receive time set to now."""
    record = orjson.loads(row)
    record["received_at"] = format_ms(time.time())
    return orjson.dumps(record)


def _answer_replay(landing: Landing, record: writer.BatchRecord) -> None:
    try:
        landing.result = replayed(record, landing.prepared.body_hash)
    except Exception as exc:  # noqa: BLE001 - the refusal (409) is this request's answer alone
        landing.error = exc


def _keep_fresh(
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
                _add_blocks(landing.org_id, table, columns, span_columns, kept, blocks)
        if table == "sessions":
            continue  # counted per line below
        for app_key_id, *_ in kept:
            result.events_by_app_key[app_key_id] = result.events_by_app_key.get(app_key_id, 0) + 1
        result.accepted += len(kept)
    _count_session_lines(prepared.tables.get("sessions") or [], fresh_tables.get("sessions") or [], result)


def _add_blocks(
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


_doors: dict[tuple[str, str, Path], FrontDoor] = {}
_doors_lock = threading.Lock()


def _door_key(settings: Settings) -> tuple[str, str, Path]:
    return (settings.resolved_warehouse_url, settings.warehouse_database, settings.data_dir / "front_door")


def front_door(settings: Settings) -> FrontDoor:
    """The process's front door of ``settings``' warehouse, its spool under ``<data_dir>/front_door``."""
    key = _door_key(settings)
    with _doors_lock:
        door = _doors.get(key)
        if door is None:
            door = _doors[key] = FrontDoor(settings)
        return door


def front_door_status() -> FrontDoorStatus | None:
    """The queue of this process's busiest front door (``None`` before the first request): a server has one."""
    with _doors_lock:
        doors = list(_doors.values())
    states = [door.status() for door in doors]
    return max(states, key=lambda s: (s["rows_waiting"], s["flushes_per_second"]), default=None)


def door_status(settings: Settings) -> FrontDoorStatus | None:
    """The queue of ``settings``' front door in this process (``None`` before its first request): what readiness
    and the service's watch read (a test process serves several installations; a server has one)."""
    with _doors_lock:
        door = _doors.get(_door_key(settings))
    return door.status() if door is not None else None


def close_front_doors(timeout: float = 30.0) -> None:
    """Drain and stop every front door of this process (server shutdown, the interpreter's exit)."""
    with _doors_lock:
        doors = list(_doors.values())
        _doors.clear()
    for door in doors:
        door.close(timeout)


atexit.register(close_front_doors)


def settle_spooled(settings: Settings) -> None:
    """Read your writes: wait until every row this process answered before now has landed in ``settings``'
    warehouse (the API's and the pages' warehouse dependency calls this; a no-op when nothing is spooled)."""
    with _doors_lock:
        door = _doors.get(_door_key(settings))
    if door is not None:
        door.settle_spooled()


def settle_front_doors(timeout: float = 30.0) -> bool:
    """Wait until every front door of this process has drained its spool (shutdown, tests)."""
    with _doors_lock:
        doors = list(_doors.values())
    return all(door.settle(timeout) for door in doors)


@contextlib.contextmanager
def drains_held(settings: Settings, timeout: float = 60.0) -> Iterator[int]:
    """:meth:`FrontDoor.drains_held` on ``settings``' front door in this process (made when it has none yet,
    so a request arriving during the hold is held too); yields the rows waiting after the cut-off."""
    with front_door(settings).drains_held(timeout) as waiting:
        yield waiting
