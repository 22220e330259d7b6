"""Group commit: the check-ins of concurrent requests written in one control-store transaction.

One transaction per check-in held the check-in path to ~140 a second on SQLite (each commit an fsync); the
front door lands concurrent requests' rows together (docs/architecture.md), and check-ins do the same here.
No thread of its own: the first request to find no write under way leads — it writes everything pending in
one transaction, answers each request once that transaction has committed (a 202 means the check-in is
stored), then hands the lead to the next waiting request, if any. A request's own failure (an uptime slug
given a check-in) is its own answer; the others of the batch are written."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from stacklens.blocking import may_block

T = TypeVar("T")
R = TypeVar("R")


@dataclass(eq=False)
class Job(Generic[T, R]):
    """One request's work, and its answer once its batch has committed."""

    work: T
    result: R | None = None
    error: BaseException | None = None
    lead: bool = False
    finished: bool = False
    wake: threading.Event = field(default_factory=threading.Event)  # finished, or handed the lead


@dataclass(eq=False)
class Group(Generic[T, R]):
    """The pending jobs of one store; ``write`` writes a batch in one transaction, setting each job's
    ``result`` or ``error`` (and raising only when the transaction itself fails)."""

    write: Callable[[list[Job[T, R]]], None]
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: list[Job[T, R]] = field(default_factory=list)
    writing: bool = False
    batches: int = 0  # transactions written (the bench reads it)

    def submit(self, work: T) -> R:
        """``work`` written with whatever else is pending; its result, or its error raised."""
        # A control-store transaction waits for the disk: never on the event loop. Asked before the job joins
        # the group, so a request admitted on the loop runs again on a thread with nothing left behind.
        may_block("a check-in's control-store write")
        job: Job[T, R] = Job(work)
        with self.lock:
            self.pending.append(job)
            job.lead = not self.writing
            self.writing = True
        if not job.lead:
            job.wake.wait()
        if not job.finished:  # leading from the start, or handed the lead by the previous leader
            self._lead(job)
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]  # set by write() for every job without an error

    def _lead(self, own: Job[T, R]) -> None:
        with self.lock:
            batch, self.pending = self.pending, []
        try:
            self.write(batch)
        except BaseException as exc:  # noqa: BLE001 - the transaction failed: every request of it is told
            for job in batch:
                job.error = exc
        finally:
            # Whatever happened, the batch is answered and the lead handed on: a leader that left without it
            # would leave every later request of this store waiting for good.
            self.batches += 1
            for job in batch:
                job.finished = True
                job.wake.set()
            with self.lock:
                if self.pending:  # requests that arrived during the write: the first of them leads next
                    self.pending[0].lead = True
                    self.pending[0].wake.set()
                else:
                    self.writing = False


_GROUPS: dict[Any, Group[Any, Any]] = {}
_GROUPS_LOCK = threading.Lock()


def group_for(key: Any, write: Callable[[list[Job[T, R]]], None]) -> Group[T, R]:
    """The group of one store (made on first use: nothing happens at import)."""
    with _GROUPS_LOCK:
        found = _GROUPS.get(key)
        if found is None:
            found = _GROUPS[key] = Group(write)
        return found
