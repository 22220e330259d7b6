"""The front door of one warehouse: its state, acceptor and drainer, and the request's side — a request queued
(refused when the queue is full), waited for, and the holds a backup or a merge takes. See
:mod:`stacklens.ingest.front_door` for the walk of a request's rows."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TypedDict

from stacklens.errors import Unavailable
from stacklens.ingest.batch_result import BatchResult
from stacklens.ingest.front_door.accept import Acceptor
from stacklens.ingest.front_door.drain import Drainer
from stacklens.ingest.front_door.state import DoorState
from stacklens.ingest.landing import Landing
from stacklens.ingest.project_holds import ProjectHold
from stacklens.ingest.refusals import note_refusal
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


class FrontDoor:
    """One warehouse's front door (one per process and warehouse: see
    :func:`~stacklens.ingest.front_door.doors.front_door`): a ``state`` that its ``acceptor`` and its
    ``drainer`` share, and the request's side over them."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.state = DoorState(settings)
        self.drainer = Drainer(self.state)
        self.acceptor = Acceptor(self.state, self.drainer)

    def accept_here(self) -> None:
        """The event loop's turn to accept what it submitted (:meth:`.accept.Acceptor.accept_here`)."""
        self.acceptor.accept_here()

    def recover(self) -> None:
        """Land what a stopped process left in the spool, once, before any new row
        (:meth:`.drain.Drainer.recover`)."""
        self.drainer.recover()

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
        state = self.state
        rows = landing.rows
        with state.condition:
            if not state.recovered:
                self.drainer.recover()  # the condition's lock is re-entrant
            waiting = state.rows_waiting + state.rows_spooled
            if waiting and waiting + rows > MAX_ROWS_WAITING:
                note_refusal(
                    state.settings.data_dir, "queue"
                )  # readiness and the service's own alerts read it (stacklens/self_watch)
                if landing.outcomes is not None:  # counted once, its quota given back for the resend
                    landing.outcomes.refuse("invalid", QUEUE_FULL)
                raise QueueFull(
                    f"the front door holds {waiting:,} rows waiting for the warehouse; retry shortly"
                )
            landing.queued = time.monotonic()
            state.waiting.append(landing)
            state.rows_waiting += rows
            if wake:
                self.acceptor.wake()

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until every spooled row is in the warehouse and its journal gone (tests, shutdown); whether
        it is."""
        state = self.state
        deadline = time.monotonic() + timeout
        with state.condition:
            while state.waiting or state.spooled or state.draining:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                state.condition.wait(min(left, 0.05))
        self.drainer.settle_retired()  # the landed journals waiting for the warehouse's sync
        return True

    def settle_spooled(self, timeout: float = SETTLE_SECONDS) -> bool:
        """Wait until every row answered before this call is in the warehouse (a reader in this process sees
        its own writes: an event answered 200 is on the next page read); whether it is, within ``timeout``."""
        state = self.state
        deadline = time.monotonic() + timeout
        with state.condition:
            target = state.spooled_seq
            while state.landed_seq < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                state.hurry = True
                state.condition.notify_all()
                state.condition.wait(min(left, 0.05))
        return True

    @contextlib.contextmanager
    def drains_held(self, timeout: float = 60.0) -> Iterator[int]:
        """A cut-off for a backup: every row answered before the call is landed first, then no drain starts
        until the block ends. Requests keep being answered (their rows wait in the spool, durable) and land
        after the block: an event answered 200 is wholly before the cut-off or wholly after it. Yields the
        rows spooled after the cut-off so far (0 at entry, as a rule)."""
        state = self.state
        self.recover()  # what a stopped server left in the spool was answered 200: before the cut-off
        if not self.settle_spooled(timeout):
            raise Unavailable(f"the front door did not land its spooled rows within {timeout:g} s; retry")
        deadline = time.monotonic() + timeout
        with state.condition:
            # Events a merge holds back (stacklens.ingest.project_holds) were answered before the cut-off: let
            # the merge end and them land first, or the backup would miss them.
            while state.projects.held() or any(group.held for group in state.spooled):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unavailable("a merge held its project's events past the backup's wait; retry")
                state.hurry = True
                state.condition.notify_all()
                state.condition.wait(min(left, 0.05))
            state.holds += 1
            while state.draining:  # a drain of rows answered after the settle: let it finish, it is before
                left = deadline - time.monotonic()
                if left <= 0:
                    state.holds -= 1
                    state.condition.notify_all()
                    raise Unavailable("a front-door drain did not finish in time for the backup; retry")
                state.condition.wait(min(left, 0.05))
            waiting = state.rows_spooled
        try:
            yield waiting
        finally:
            with state.condition:
                state.holds -= 1
                state.hurry = True  # what waited during the hold lands at once
                state.condition.notify_all()

    @contextlib.contextmanager
    def landing_held(self, project_id: int, timeout: float = 60.0) -> Iterator[ProjectHold]:
        """For a merge or split of ``project_id``'s issues: every row answered before the call is landed
        first, then no event of the project lands until the block ends (they wait in the spool, answered and
        durable); every other project's rows, and the project's other rows, keep landing
        (:mod:`stacklens.ingest.project_holds`). Yields the hold, which redirects the merged fingerprints."""
        state = self.state
        self.recover()
        if not self.settle_spooled(timeout):
            raise Unavailable(f"the front door did not land its spooled rows within {timeout:g} s; retry")
        deadline = time.monotonic() + timeout
        with state.condition:
            state.projects.hold(project_id)
            # A drain taken before the hold may carry the project's events: let it land, it is before.
            while state.draining:
                left = deadline - time.monotonic()
                if left <= 0:
                    state.projects.release(project_id)
                    state.condition.notify_all()
                    raise Unavailable("a front-door drain did not finish in time for the merge; retry")
                state.condition.wait(min(left, 0.05))
        try:
            yield ProjectHold(state.projects, project_id)
        finally:
            with state.condition:
                state.projects.release(project_id)
                state.hurry = True  # what waited during the hold lands at once
                state.condition.notify_all()

    def close(self, timeout: float = 30.0) -> None:
        """Drain what is spooled (within ``timeout``) and stop the threads; what is left stays in the spool
        for the next start. Called at shutdown: a thread inside the engine while the interpreter exits
        crashes it."""
        state = self.state
        deadline = time.monotonic() + timeout
        with state.condition:
            state.closing = True
            state.condition.notify_all()
            state.requests.notify_all()
            while self.acceptor.thread is not None or self.drainer.thread is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                state.condition.wait(min(left, 0.1))

    def status(self) -> FrontDoorStatus:
        state = self.state
        now = time.monotonic()
        with state.condition:
            oldest = min(
                state.waiting[0].queued if state.waiting else now,
                state.spooled[0].queued if state.spooled else now,
            )
            while state.drains and now - state.drains[0][0] > RATE_WINDOW_SECONDS:
                state.drains.popleft()
            while state.accepts and now - state.accepts[0][0] > RATE_WINDOW_SECONDS:
                state.accepts.popleft()
            drains = len(state.drains)
            return {
                "requests_waiting": len(state.waiting),
                "rows_waiting": state.rows_waiting + state.rows_spooled,
                "rows_spooled": state.rows_spooled,
                "oldest_waiting_ms": round((now - oldest) * 1000, 1),
                "flushes_per_second": round(drains / RATE_WINDOW_SECONDS, 2),
                "rows_per_flush": round(sum(r for _, r, _ in state.drains) / drains, 1) if drains else 0.0,
                "requests_per_accept": round(sum(a[1] for a in state.accepts) / len(state.accepts), 2)
                if state.accepts
                else 0.0,
                "last_flush_ms": round(state.drains[-1][2] * 1000, 1) if drains else 0.0,
                "accept_ms": round(sum(a[2] for a in state.accepts) / len(state.accepts) * 1000, 1)
                if state.accepts
                else 0.0,
                "queued_ms": round(
                    sum(a[3] for a in state.accepts) / max(1, sum(a[1] for a in state.accepts)) * 1000, 1
                ),
                "drain_error": state.drain_error,
                "keys_indexed": state.index.trusted,
                "keys_in_index": state.index.size if state.index.trusted else 0,
            }
