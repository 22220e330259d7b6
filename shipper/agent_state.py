"""What the shipper's delivery loop (:mod:`shipper.agent`) holds between its steps: the configuration, the
tracker and its scanner, the dead letters, the transport, the queue of batches and the waits the service asked
for; and how the tracker and ``status.json`` are written from it."""

from __future__ import annotations

import collections
import logging
import time

from shipper.batch import Batch
from shipper.config import Config
from shipper.deadletters import DeadLetterFile
from shipper.state import Scanner
from shipper.status import STATUS_INTERVAL, publish, status_path
from shipper.tracker import TrackerStore
from shipper.transport import Transport
from shipper.wake import Wake

log = logging.getLogger(__name__)


class AgentState:
    """The delivery loop's state, and its writes of the tracker and ``status.json``."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.store = TrackerStore(config.tracker_path)
        self.scanner = Scanner(config, self.store)
        self.dead = DeadLetterFile(config.storage_path, config.max_dead_letter_bytes)
        self.transport = Transport(config)
        self.queue: collections.deque[Batch] = collections.deque()
        self.open: Batch | None = None
        self.wake = Wake()  # set from signal handlers: not a threading.Event (see shipper.wake)
        self.stopping = False
        self.reload = False
        self.blocked: str = ""  # "auth" / "app": waiting for a configuration fix
        self.park_until = 0.0
        self.not_before = 0.0  # the service's Retry-After: no batch goes before it, reload or not
        self.connected = False
        self.last_save = 0.0
        self.last_status = 0.0
        self.status_path = status_path(config)
        self.scanner.dirty = False

    # -- tracker and configuration -----------------------------------------------------------------
    def _save(self, force: bool = False) -> None:
        """Write the tracker when forced, or when something changed and ``commitInterval`` has passed.

        Throttled because each generation costs two fsyncs; a crash in between only means a resend, which
        the Idempotency-Key and the service's event-id dedup turn into nothing.
        """
        now = time.monotonic()
        if not force and (not self.scanner.dirty or now - self.last_save < self.config.commit_interval):
            self._publish()
            return
        try:
            self.store.save(self.scanner.body())
            self.scanner.dirty = False
            self.last_save = now
        except OSError as exc:
            self.scanner.access_problem(str(self.store.path), f"cannot write the tracker ({exc.strerror})")
        self._publish(urgent=True)  # keep status.json at least as new as the tracker

    def _publish(self, urgent: bool = False) -> None:
        """Write ``status.json`` (no fsync) when figures changed: at most every STATUS_INTERVAL, or now."""
        now = time.monotonic()
        if not self.scanner.status_dirty and not (urgent and self.last_status < self.last_save):
            return
        if not urgent and now - self.last_status < STATUS_INTERVAL:
            return
        try:
            publish(self.status_path, self.scanner.body())
        except OSError as exc:  # a view only: the tracker's own write reports an unwritable directory
            log.debug("status.json not written: %s", exc.strerror)
            return
        self.scanner.status_dirty = False
        self.last_status = now
