"""An admitted request's outcomes, carried from its admission to its end and counted exactly once.

A request's items are counted when what became of them is known, not when somebody waits for the answer: a
sender that times out, a request cancelled by a disconnect, a full queue, a spool that cannot be written or a
failure anywhere between the admission and the spool would otherwise leave them uncounted, and a quota spent
by a request the door then refused would be spent again by the SDK's retry. So the admission makes one
:class:`ManagedOutcomes` (as Relay's managed envelope), the landing carries it through the front door, and
whoever ends the landing resolves it, once:

- :meth:`~ManagedOutcomes.accept`: the rows are in the spool (durable), every item counted as prepared;
- :meth:`~ManagedOutcomes.refuse`: refused whole after its items were read (a quota, a full queue, a spool
  error): the items that would have landed count under the refusal's outcome and reason, and the quota the
  request spent is given back;
- :meth:`~ManagedOutcomes.forget`: a replay of a keyed batch, counted the first time; or an admission that
  stopped before any effect to run again on a thread (:class:`stacklens.blocking.WouldBlock`).

One never resolved (the request's task cancelled between its admission and the door, a bug) is resolved when
it is collected: its items count as ``invalid``/``internal`` and its quota is given back. That last resort
and every give-back run on one thread of this module's (:func:`_later`): a collection may happen anywhere,
holding any lock, even on the event loop inside :func:`stacklens.blocking.loop_only`, and a give-back to
Redis is a round trip.

Cost: a request makes one small object; accepting it is the one
:func:`~stacklens.outcomes.tally.count_outcomes` the request made before (bench/outcomes.py measures both).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable

from stacklens.outcomes.counting import INTERNAL, Outcomes
from stacklens.outcomes.tally import count_outcomes
from stacklens.settings import Settings

log = logging.getLogger(__name__)

# Gives back what a request spent of its quotas (api/token_buckets.RateLimiter.take_items makes it).
GiveBack = Callable[[], None]


class ManagedOutcomes:
    """The outcomes of one admitted request; resolve it exactly once (see the module doc).

    ``outcomes`` are the request's items as prepared. Those prepared as accepted (client reports aside: a
    report is the SDK's word, kept whatever happens to the events beside it) and ``also`` (an envelope's
    attachments, counted and never stored) follow the request's end; the rest (lines that could not be
    read, an unknown app key, what a client report says it dropped) stand whatever happens. Nothing is
    copied or split unless the request is refused: accepting counts ``outcomes`` as they are."""

    __slots__ = ("also", "give_back", "org_id", "outcomes", "resolved", "settings")

    def __init__(
        self, settings: Settings, org_id: int, outcomes: Outcomes, also: Outcomes | None = None
    ) -> None:
        if _worker is None and not _work.empty():  # a last resort queued by a finalizer: run it now
            _start_worker()
        self.settings = settings
        self.org_id = org_id
        self.outcomes = outcomes
        self.also = also
        self.resolved = False
        self.give_back: GiveBack | None = None

    def accept(self) -> None:
        """The rows are in the spool: every item counts as prepared."""
        if self._resolve():
            count_outcomes(self.settings, self.org_id, self.outcomes)
            if self.also:
                count_outcomes(self.settings, self.org_id, self.also)

    def refuse(self, outcome: str, reason: str) -> None:
        """Refused whole after its items were read: the items that would have landed count under
        ``outcome`` for ``reason``, and what the request spent of its quotas is given back."""
        if self._resolve():
            count_outcomes(self.settings, self.org_id, self.refused(outcome, reason))
            if self.give_back is not None:
                _later(self.give_back)

    def forget(self) -> None:
        """Resolved without a count: a replay (counted the first time), or an admission that runs again."""
        self._resolve()

    def refused(self, outcome: str, reason: str) -> Outcomes:
        """The outcomes :meth:`refuse` counts."""
        counts: Outcomes = Counter()
        for key, quantity in self.outcomes.items():
            project_id, category, was, _ = key
            if was == "accepted" and category != "client_report":
                counts[(project_id, category, outcome, reason)] += quantity
            else:
                counts[key] += quantity
        for (project_id, category, _, _), quantity in (self.also or {}).items():
            counts[(project_id, category, outcome, reason)] += quantity
        return counts

    def _resolve(self) -> bool:
        # The door's threads and the event loop each resolve a landing at most once, one after the other
        # (finish, or a refusal before the door had it); the flag guards against a second call, not a race.
        if self.resolved:
            return False
        self.resolved = True
        return True

    def __del__(self) -> None:
        # The last resort (see the module doc): nothing here may take a lock a collection could interrupt.
        if not getattr(self, "resolved", True):
            self.resolved = True
            counts = self.refused("invalid", INTERNAL)
            settings, org_id, give_back = self.settings, self.org_id, self.give_back
            # No thread is started from here: the worker runs it, or the next request starts the worker.
            _work.put(lambda: _lost(settings, org_id, counts, give_back))


def _lost(settings: Settings, org_id: int, counts: Outcomes, give_back: GiveBack | None) -> None:
    log.warning("outcomes: a request of organization %d ended unanswered; counted as internal", org_id)
    count_outcomes(settings, org_id, counts)
    if give_back is not None:
        give_back()


# Work that must not run where it is asked for (a collection, the event loop): one daemon thread, started the
# first time there is such work (an installation that never refuses a request after its quotas has none).
# queue.SimpleQueue.put may be called from a finalizer (it takes no lock a collection can hold); a finalizer
# starts no thread, the next request or settled_later does. One thread runs the calls in the order asked.
_work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_worker: threading.Thread | None = None
_worker_lock = threading.Lock()


def _later(call: Callable[[], None]) -> None:
    _work.put(call)
    if _worker is None:
        _start_worker()


def _start_worker() -> None:
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = threading.Thread(target=_run, name="outcome-give-back", daemon=True)
            _worker.start()


def _run() -> None:
    while True:
        call = _work.get()
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - a give-back that fails (Redis down) only logs
            log.warning("outcomes: giving back a refused request's quota failed: %s", exc)


def settled_later(timeout: float = 5.0) -> bool:
    """Wait until every give-back and last-resort count asked for so far has run (tests, benchmarks)."""
    _start_worker()
    done = threading.Event()
    _later(done.set)
    return done.wait(timeout)
