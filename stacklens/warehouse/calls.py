"""The warehouse calls this process makes through its clients: each call that waits for the warehouse is
marked (:func:`marked`: stacklens.blocking.may_block, so none runs on the event loop) and counted — for the
allocator purge's beats (:class:`PurgeBeats`: skipped once the engine is quiet) and the pipelines' idle check
(:func:`warehouse_calls`: unchanged, nothing went through this process's clients)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.blocking import may_block

# Purges made after the last warehouse call: the engine's background merges of the last inserts go on freeing
# memory for a few seconds after them, so a few beats more purge before the quiet ones are skipped.
PURGES_AFTER_LAST_CALL = 3


# Every call of clickhouse-connect's synchronous clients that waits for the warehouse goes through one of
# these (query, query_df, query_arrow and the streams through the first three; insert and insert_df through
# data_insert): marking them marks every query, insert and command (tests/stacklens/warehouse/test_client.py
# plants each public one on the event loop).
WAITING_CALLS = (
    "_query_with_context",
    "raw_query",
    "raw_stream",
    "command",
    "data_insert",
    "raw_insert",
    "ping",
)


def marked(client: Client) -> Client:
    """``client`` with each of its calls that wait for the warehouse marked (stacklens.blocking.may_block):
    called on the event loop inside ``loop_only()`` it raises WouldBlock before reaching the warehouse, and
    the work runs again on a thread. The mark is the client's own, so no caller can forget it: a warehouse
    read written into an admission or an accept group one day steps aside instead of holding every request
    and page behind it."""
    for name in WAITING_CALLS:
        setattr(client, name, _marking(getattr(client, name), name))
    return client


class FinishedCalls:
    """Warehouse calls this process finished through its marked clients, but for the allocator purges and the
    calls made inside :func:`uncounted`: what the pipelines' idle check (pipelines/idle.py) compares to know
    that nothing can have landed since it last looked. A call is counted when it ends, so one still running
    while the check reads the warehouse is counted after the check. Locked: an increment lost between threads
    could bring the count back to a value the check remembers. Every call, counted or not, is also seen as
    it starts and ends, so a probe can tell whether it ran alone (:func:`alone`), and the counted ones as they
    start, for the allocator purge's beats (:class:`PurgeBeats`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._starts = 0
        self._counted_starts = 0
        self._running = 0
        self._last_end = 0.0
        self.quiet = threading.local()

    @property
    def uncounted(self) -> bool:
        """Whether this thread is inside :func:`uncounted`."""
        return bool(getattr(self.quiet, "depth", 0))

    def start(self) -> None:
        counted = not self.uncounted
        with self._lock:
            self._starts += 1
            self._counted_starts += counted
            self._running += 1

    @property
    def counted_starts(self) -> int:
        """Calls started so far, but those inside :func:`uncounted` (the allocator purge's beats)."""
        with self._lock:
            return self._counted_starts

    def add(self) -> None:
        """A call ended."""
        with self._lock:
            self._running -= 1
            self._last_end = time.monotonic()
            if not self.uncounted:
                self._count += 1

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def idle(self, for_seconds: float) -> tuple[int, bool]:
        """(calls started so far, whether none runs and none ended in the last ``for_seconds``)."""
        with self._lock:
            quiet = self._running == 0 and time.monotonic() - self._last_end >= for_seconds
            return self._starts, quiet

    def started(self) -> int:
        with self._lock:
            return self._starts


finished_calls = FinishedCalls()


class PurgeBeats:
    """When the allocator purge runs, from the warehouse calls this process started through its marked
    clients (but inside :func:`uncounted`: :attr:`FinishedCalls.counted_starts`): skipped in the beats in
    which nothing ran — on an idle server each purge statement mapped ~35 MiB of the engine's library back
    into memory only to find nothing freed."""

    def __init__(self, calls: FinishedCalls) -> None:
        self._calls = calls
        self.seen_at_purge = -1
        self.quiet_purges = 0

    def due(self) -> bool:
        """Whether this beat's purge runs: not once :data:`PURGES_AFTER_LAST_CALL` purges in a row found no
        call since the one before (nothing was freed)."""
        if self._calls.counted_starts == self.seen_at_purge:
            self.quiet_purges += 1
            return self.quiet_purges <= PURGES_AFTER_LAST_CALL
        self.quiet_purges = 0
        return True

    def purged(self) -> None:
        self.seen_at_purge = self._calls.counted_starts


purge_beats = PurgeBeats(finished_calls)


def warehouse_calls() -> int:
    """How many warehouse calls this process has finished, not counting the allocator purges nor the calls
    made inside :func:`uncounted`: unchanged since an earlier reading, nothing has been written (or read)
    through this process's clients meanwhile."""
    return finished_calls.count


@contextlib.contextmanager
def uncounted() -> Iterator[None]:
    """The warehouse calls of this thread inside the block are left out of :func:`warehouse_calls` and of the
    calls the allocator purge waits for (the pipelines' idle check, which releases the library pages its
    reads mapped itself; the purge's own statement)."""
    quiet = finished_calls.quiet
    quiet.depth = getattr(quiet, "depth", 0) + 1
    try:
        yield
    finally:
        quiet.depth -= 1


def _marking(call: Callable[..., Any], name: str) -> Callable[..., Any]:
    what = f"a warehouse call ({name.strip('_')})"

    def marked(*args: Any, **kwargs: Any) -> Any:
        may_block(what)
        finished_calls.start()
        try:
            return call(*args, **kwargs)
        finally:
            finished_calls.add()

    return marked


def alone(call: Callable[[], object], quiet_seconds: float) -> bool:
    """Run ``call`` (one warehouse statement) uncounted; True when it ran alone: no other call was running
    or had ended within ``quiet_seconds`` before it, and none started while it ran (a liveness probe then
    gives back the engine library's pages its statement mapped: stacklens/warehouse/probe.py). What ``call``
    raises is raised."""
    started, quiet = finished_calls.idle(quiet_seconds)
    with uncounted():
        call()
    return quiet and finished_calls.started() == started + 1
