"""The state a front door's three parts share — the request side (:mod:`.door`), the acceptor (:mod:`.accept`)
and the drainer (:mod:`.drain`): the queue of requests waiting, the spool of groups accepted and not landed,
what is pending between them, and the counters the status reads. Every field is read and written holding
:attr:`DoorState.condition`, the door's one lock (re-entrant), which the request side and the drainer also
wait on; the acceptor waits on :attr:`DoorState.requests`, over the same lock."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict, deque

from clickhouse_connect.driver.client import Client

from stacklens.ingest import writer
from stacklens.ingest.flush_journal import FlushJournal
from stacklens.ingest.landing import Landing, Spooled
from stacklens.ingest.project_holds import ProjectHolds
from stacklens.ingest.stored_key_index import StoredKeyIndex, stored_key_index
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse, inserting_client

# The front door's one logger, whichever of its modules writes: operators filter on this name.
log = logging.getLogger("stacklens.ingest.front_door")


# Recent drains and accept groups kept for the door's status at most (10 s of a very busy door).
RECENT_KEPT = 50_000


class DoorState:
    """A front door's queue, spool and counters, and its warehouse clients."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.journal = FlushJournal(settings.data_dir / "front_door", sync=settings.spool_sync)
        lock = threading.RLock()
        self.condition = threading.Condition(lock)
        # What the acceptor's thread waits on, over the same lock: requests waiting, or the door closing. Only
        # those wake it, and waking it wakes no one else (on `condition`, a gathering drainer was woken by
        # every request handed to the acceptor).
        self.requests = threading.Condition(lock)
        # The requests submitted and not yet taken by an accept group (the acceptor's), and their rows.
        self.waiting: deque[Landing] = deque()
        self.rows_waiting = 0
        # The groups accepted (journaled, answered or about to be) and not landed (the drainer takes them).
        self.spooled: deque[Spooled] = deque()
        self.rows_spooled = 0
        # Keys and batch records spooled but not drained yet: a request that repeats them is a duplicate or a
        # replay before the warehouse holds them. Only the acceptor adds, only the drainer removes.
        self.pending_keys: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        self.pending_batches: dict[tuple[int, str], writer.BatchRecord] = {}
        # Recent drains (finished at, rows, seconds) and accept groups (when, requests, seconds accepting,
        # seconds its requests waited for it in all): the status reads the last ten seconds of them and trims
        # the rest; bounded, so a door whose status nobody reads keeps no more than RECENT_KEPT.
        self.drains: deque[tuple[float, int, float]] = deque(maxlen=RECENT_KEPT)
        self.accepts: deque[tuple[float, int, float, float]] = deque(maxlen=RECENT_KEPT)
        self.drain_error = ""
        self.draining = False  # a drain is inserting (the taken groups are out of `spooled` meanwhile)
        self.recovered = False  # the journals a stopped process left have landed (Drainer.recover)
        self.closing = False
        # Accept groups are numbered as they are spooled; a drain lands every group spooled before it began.
        self.spooled_seq = 0
        self.landed_seq = 0
        self.hurry = False  # a reader waits for the spool (settle_spooled): drain without gathering
        self.holds = 0  # backups holding the drains (drains_held): requests are answered, rows stay spooled
        # Projects whose events a merge holds back, and its redirects (stacklens.ingest.project_holds).
        self.projects = ProjectHolds()

    @property
    def index(self) -> StoredKeyIndex:
        """The digests of the warehouse's stored keys (trusted only where this process owns it)."""
        return stored_key_index(self.settings)

    @property
    def client(self) -> Client:
        """The look-ups' client (duplicates, replays: short reads), the process's shared one."""
        return get_warehouse(self.settings)

    @property
    def inserter(self) -> Client:
        """The drains' client: a handle of their own, so no read waits behind their inserts."""
        return inserting_client(self.settings)
