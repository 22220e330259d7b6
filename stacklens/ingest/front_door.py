"""The front door: requests' rows spooled together and answered, then landed many requests at a time.

Every entrance (`/api/ingest`, the Sentry envelope and store endpoints, OTLP exports, the tunnel's lines
through the shipper) prepares its rows in the request and hands them here. Each insert into `events` runs
every materialized view behind it (100–200 ms on the embedded engine, whatever its size), so a one-event
request that paid its own insert could not go faster than that; here the cost is shared. Two threads per
warehouse:

- the *acceptor* takes every request waiting (a group commit: a lone request goes at once, a busy door groups
  many; the server's event loop accepts the requests of one turn itself when nothing of the group would
  block, :meth:`~stacklens.ingest.front_door_accept.Acceptor.accept_here`), answers replays
  (`Idempotency-Key`; a keyed batch that is no replay spends its quotas here, so a resend costs none) and
  drops duplicates with one look-up for the whole group (rows
  spooled but not yet landed are checked in memory first, then the warehouse, for the keys that
  :mod:`~stacklens.ingest.stored_key_index` may hold; an envelope's rows are checked by the drain instead,
  see :class:`~stacklens.ingest.landing.Landing`), writes the group to its journal
  (:mod:`stacklens.ingest.flush_journal`) and answers its requests;
- the *drainer* takes every group spooled, at most every :data:`DRAIN_INTERVAL_SECONDS` (sooner when many rows
  or a reader wait), and inserts them as one block per table and partition with tokens of the drain (spans
  before their transactions: the transaction row is what the duplicate check finds; batch records last), then
  removes the journals. A journal found again (a failed drain, the next start after a kill) is inserted whole
  with the same tokens: the engine lands exactly the blocks that were missing.

A request is answered once its rows are in the spool (docs/architecture.md §5: durable, drained exactly once)
— and, when
the door is idle and quiet (a lone request: none other waiting, no drain running, nothing spooled, nothing
accepted in the last second), only once its group has landed: an occasional request waits one insert (~0.1 s)
and its event is visible everywhere at its 200, while under load, or from a sender posting in sequence,
requests are answered from the spool and their rows land in the next drain, within a second. Reads in this
process wait for rows answered before them (:func:`settle_spooled`), so a user always reads their own writes.

Here: the request's side of the door and the process's doors; the acceptor is in
:mod:`stacklens.ingest.front_door_accept`, the drainer in :mod:`stacklens.ingest.front_door_drain`, the state
they share in :mod:`stacklens.ingest.front_door_state`, what travels through them in
:mod:`stacklens.ingest.landing`.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from stacklens.errors import Unavailable
from stacklens.ingest.batch_result import BatchResult
from stacklens.ingest.front_door_accept import Acceptor
from stacklens.ingest.landing import (
    Landing,
)
from stacklens.ingest.project_holds import ProjectHold
from stacklens.ingest.refusals import note_refusal
from stacklens.ingest.stored_key_index import load_owned_index
from stacklens.outcomes.counting import QUEUE_FULL
from stacklens.settings import Settings

# Rows that may wait for a flush before an entrance answers 503 (the queue is full): a burst larger than the
# warehouse can take is refused with Retry-After rather than held in memory.
MAX_ROWS_WAITING = 200_000
# How long a request waits for its flush before it is answered 503 (the warehouse is stuck).
WAIT_SECONDS = 120.0
# How long a reader waits for rows answered before it to land (settle_spooled), at most.
SETTLE_SECONDS = 5.0
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
    keys_indexed: bool  # the stored keys are known in memory (stacklens.ingest.stored_key_index)
    keys_in_index: int


class FrontDoor(Acceptor):
    """The request's side, the acceptor and the drainer of one warehouse (one per process and warehouse; see
    :func:`front_door`)."""

    # -- the request's side --------------------------------------------------------------------------------

    def land(self, landing: Landing) -> BatchResult:
        """Queue ``landing`` and wait until its rows are spooled; its result, or the refusal."""
        self.submit(landing)
        if not landing.done.wait(WAIT_SECONDS):
            raise Unavailable(f"the front door did not take the rows within {WAIT_SECONDS:g} s; retry")
        return landing.answer()

    def submit(self, landing: Landing, *, wake: bool = True) -> None:
        """Queue ``landing`` (refused at once when the queue is full); ``landing.finish()`` tells when its
        rows are spooled, or why not. ``wake=False``: the caller calls :meth:`accept_here` next (the event
        loop, once per turn), which accepts the requests waiting itself or wakes the acceptor's thread."""
        rows = landing.rows
        with self._condition:
            if not self._recovered:
                self._recover_held()
            waiting = self._rows_waiting + self._rows_spooled
            if waiting and waiting + rows > MAX_ROWS_WAITING:
                note_refusal(
                    self.settings.data_dir, "queue"
                )  # readiness and the service's own alerts read it (stacklens/self_watch)
                if landing.outcomes is not None:  # counted once, its quota given back for the resend
                    landing.outcomes.refuse("invalid", QUEUE_FULL)
                raise QueueFull(
                    f"the front door holds {waiting:,} rows waiting for the warehouse; retry shortly"
                )
            landing.queued = time.monotonic()
            self._waiting.append(landing)
            self._rows_waiting += rows
            if wake:
                self._wake_acceptor()  # the condition's lock is re-entrant

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until every spooled row is in the warehouse and its journal gone (tests, shutdown); whether
        it is."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._waiting or self._spooled or self._draining:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._condition.wait(min(left, 0.05))
        self._settle_retired()  # the landed journals waiting for the warehouse's sync (front_door_drain)
        return True

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
        after the block: an event answered 200 is wholly before the cut-off or wholly after it. Yields the
        rows spooled after the cut-off so far (0 at entry, as a rule)."""
        self.recover()  # what a stopped server left in the spool was answered 200: before the cut-off
        if not self.settle_spooled(timeout):
            raise Unavailable(f"the front door did not land its spooled rows within {timeout:g} s; retry")
        deadline = time.monotonic() + timeout
        with self._condition:
            # Events a merge holds back (stacklens.ingest.project_holds) were answered before the cut-off: let
            # the merge end and them land first, or the backup would miss them.
            while self.projects.held() or any(group.held for group in self._spooled):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unavailable("a merge held its project's events past the backup's wait; retry")
                self._hurry = True
                self._condition.notify_all()
                self._condition.wait(min(left, 0.05))
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

    @contextlib.contextmanager
    def landing_held(self, project_id: int, timeout: float = 60.0) -> Iterator[ProjectHold]:
        """For a merge or split of ``project_id``'s issues: every row answered before the call is landed
        first, then no event of the project lands until the block ends (they wait in the spool, answered and
        durable); every other project's rows, and the project's other rows, keep landing
        (:mod:`stacklens.ingest.project_holds`). Yields the hold, which redirects the merged fingerprints."""
        self.recover()
        if not self.settle_spooled(timeout):
            raise Unavailable(f"the front door did not land its spooled rows within {timeout:g} s; retry")
        deadline = time.monotonic() + timeout
        with self._condition:
            self.projects.hold(project_id)
            # A drain taken before the hold may carry the project's events: let it land, it is before.
            while self._draining:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.projects.release(project_id)
                    self._condition.notify_all()
                    raise Unavailable("a front-door drain did not finish in time for the merge; retry")
                self._condition.wait(min(left, 0.05))
        try:
            yield ProjectHold(self.projects, project_id)
        finally:
            with self._condition:
                self.projects.release(project_id)
                self._hurry = True  # what waited during the hold lands at once
                self._condition.notify_all()

    def close(self, timeout: float = 30.0) -> None:
        """Drain what is spooled (within ``timeout``) and stop the threads; what is left stays in the spool
        for the next start. Called at shutdown: a thread inside the engine while the interpreter exits
        crashes it."""
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
                "keys_indexed": self.index.trusted,
                "keys_in_index": self.index.size if self.index.trusted else 0,
            }


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


def recover_and_index(settings: Settings) -> None:
    """At start: land what a stopped process left in the spool, then index the stored keys if this process
    owns the warehouse (:mod:`stacklens.ingest.stored_key_index`: read after those rows landed)."""
    door = front_door(settings)
    door.recover()
    load_owned_index(settings, door.client)


def front_door_status() -> FrontDoorStatus | None:
    """The queue of this process's busiest front door (``None`` before the first request): a server has
    one."""
    with _doors_lock:
        doors = list(_doors.values())
    states = [door.status() for door in doors]
    return max(states, key=lambda s: (s["rows_waiting"], s["flushes_per_second"]), default=None)


def door_status(settings: Settings) -> FrontDoorStatus | None:
    """The queue of ``settings``' front door in this process (``None`` before its first request): what
    readiness and the service's watch read (a test process serves several installations; a server has one)."""
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


@contextlib.contextmanager
def landing_held(settings: Settings, project_id: int, timeout: float = 60.0) -> Iterator[ProjectHold]:
    """:meth:`FrontDoor.landing_held` on ``settings``' front door in this process (made when it has none yet,
    so an event of the project arriving during the hold is held too)."""
    with front_door(settings).landing_held(project_id, timeout) as hold:
        yield hold
