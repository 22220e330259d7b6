"""The state one front door shares between its request side (:mod:`stacklens.ingest.front_door`), its
acceptor (:mod:`stacklens.ingest.front_door_accept`) and its drainer
(:mod:`stacklens.ingest.front_door_drain`): the queue, the spool and the counters, all behind one
condition."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict, deque

from clickhouse_connect.driver.client import Client

from stacklens.ingest import writer
from stacklens.ingest.flush_journal import FlushJournal
from stacklens.ingest.landing import (
    Landing,
    Spooled,
)
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
        self._condition = threading.Condition()
        self._waiting: deque[Landing] = deque()
        self._rows_waiting = 0
        self._acceptor: threading.Thread | None = None
        # Held while a group is accepted, by the acceptor's thread or the event loop (accept_here): groups
        # are accepted one at a time, so two requests carrying one key cannot both find it new.
        self._accepting = threading.Lock()
        self._drainer: threading.Thread | None = None
        self._spooled: deque[Spooled] = deque()
        self._rows_spooled = 0
        # Keys and batch records spooled but not drained yet: a request that repeats them is a duplicate or a
        # replay before the warehouse holds them. Only the acceptor adds, only the drainer removes.
        self._pending_keys: defaultdict[tuple[int, str], set[str]] = defaultdict(set)
        self._pending_batches: dict[tuple[int, str], writer.BatchRecord] = {}
        # Recent drains (finished at, rows, seconds) and accept groups (when, requests, seconds accepting,
        # seconds its requests waited for it in all): the status reads the last ten seconds of them and trims
        # the rest; bounded, so a door whose status nobody reads keeps no more than RECENT_KEPT.
        self._drains: deque[tuple[float, int, float]] = deque(maxlen=RECENT_KEPT)
        self._accepts: deque[tuple[float, int, float, float]] = deque(maxlen=RECENT_KEPT)
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

    _draining = False
