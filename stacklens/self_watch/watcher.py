"""The thread that watches ingest for the operators (`stacklens serve` runs one; see the package doc).

Every ``poll_seconds`` it reads what the entrances already keep — the disk floor's cached reading, this
process's last queue refusal, the front door's queue — and opens or closes an episode (:mod:`.episodes`). A
condition closes only after it has been clear for ``clear_seconds``, so a disk hovering at its floor or a
queue refused every other second is one episode, not a stream of alerts and recoveries."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

from stacklens.disk_floor import disk_room
from stacklens.ingest.front_door import door_status
from stacklens.ingest.refusals import seconds_since_refusal
from stacklens.self_watch.episodes import Condition, firing_conditions, set_firing
from stacklens.settings import Settings

log = logging.getLogger(__name__)

POLL_SECONDS = 5.0
# Clear this long before an episode closes (its recovery note is sent).
CLEAR_SECONDS = 60.0
# "Accepted but not visible": the oldest row answered 200 and not yet in the warehouse is older than this, or
# the drain has failed for this long (an event is in the issue list within 1 s of its 200 when all is well).
VISIBLE_SECONDS = 60.0
# A queue refusal this recent counts as "ingest refused for the queue".
QUEUE_REFUSAL_SECONDS = 30.0


class ServiceWatch:
    """Watches one server's ingest (its settings' data directory and this process's front door)."""

    def __init__(
        self,
        settings: Settings,
        *,
        poll_seconds: float = POLL_SECONDS,
        clear_seconds: float = CLEAR_SECONDS,
        visible_seconds: float = VISIBLE_SECONDS,
    ) -> None:
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.clear_seconds = clear_seconds
        self.visible_seconds = visible_seconds
        self._firing: set[str] | None = None  # read from the control store on the first check
        self._clear_since: dict[str, float] = {}
        self._drain_error_since: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="stacklens-self-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.check()
            except Exception:  # the watch goes on; the control store may be back next time
                log.exception("service watch: the check failed")
            self._stop.wait(self.poll_seconds)

    def check(self) -> None:
        """Look once at every condition this thread watches, opening and closing their episodes."""
        now = time.monotonic()
        room = disk_room(self.settings)
        self.observe("ingest_refused_disk", room.below, room.words(), now)
        since = seconds_since_refusal(self.settings.data_dir, "queue")
        refused = since is not None and since < QUEUE_REFUSAL_SECONDS
        self.observe("ingest_refused_queue", refused, "the front door refused rows: its queue was full", now)
        self.observe("events_not_visible", *self._not_visible(now), now)

    def _not_visible(self, now: float) -> tuple[bool, str]:
        status = door_status(self.settings)
        if status is None:
            return False, ""
        error = status["drain_error"]
        if not error:
            self._drain_error_since = None
        elif self._drain_error_since is None:
            self._drain_error_since = now
        oldest = status["oldest_waiting_ms"] / 1000 if status["rows_waiting"] else 0.0
        failing = now - self._drain_error_since if self._drain_error_since is not None else 0.0
        detail = (
            f"{status['rows_waiting']:,} rows answered and not in the warehouse, the oldest for {oldest:.0f} s"
            + (f"; the drain fails: {error}" if error else "")
        )
        return oldest > self.visible_seconds or failing > self.visible_seconds, detail

    def observe(self, condition: Condition, active: bool, detail: str, now: float) -> None:
        """Open the episode when ``active`` and not open; close it once clear for ``clear_seconds``."""
        if self._firing is None:
            self._firing = firing_conditions(self.settings)
        if active:
            self._clear_since.pop(condition, None)
            if condition not in self._firing:
                set_firing(self.settings, condition, True, detail)
                self._firing.add(condition)
            return
        if condition not in self._firing:
            return
        cleared = self._clear_since.setdefault(condition, now)
        if now - cleared >= self.clear_seconds:
            set_firing(self.settings, condition, False, "clear again")
            self._firing.discard(condition)
            self._clear_since.pop(condition, None)


@contextlib.contextmanager
def watching(settings: Settings, **options: float) -> Iterator[ServiceWatch]:
    """Run a :class:`ServiceWatch` for ``settings`` while the block runs (`stacklens serve`, tests)."""
    watch = ServiceWatch(settings, **options)
    watch.start()
    try:
        yield watch
    finally:
        watch.stop()
