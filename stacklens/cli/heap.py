"""The serving process's heap: the cyclic garbage collector (what the server built at start set aside, young
objects collected less often) and the C allocator's freed memory given back on a beat
(:mod:`stacklens.c_allocator`).

A one-event request allocates a few thousand short-lived objects (the parsed event, its rows); with the
interpreter's default thresholds (700, 10, 10) the collector ran a young pass every few requests and an
older one every few dozen, and each older pass walked the ~280,000 objects the app, its routes and its
libraries made at start. Measured with the peer benchmark's 3,000 one-event envelopes: 0.5 s of the
server's CPU went to the collector (about 5 % of it), 0.035 s with the objects of the start frozen and the
thresholds below. Nearly everything a request allocates is freed by reference counting as it ends; the
collector is only for cycles, which a later pass still finds."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

from stacklens.c_allocator import glibc, release_freed_memory

# A young pass per this many net allocations (the default 700), an older one per this many young passes.
YOUNG_ALLOCATIONS = 10_000
YOUNG_PASSES = 50
OLDER_PASSES = 1_000
# Free blocks inside the C allocator's arenas go back this often while serving (malloc_trim: a few ms).
TRIM_EVERY_SECONDS = 30.0


def settle_heap() -> None:
    """Collect once, set aside every object alive now (the app built, its imports) so no later pass walks
    them, and raise the thresholds. Called once the app is built, before the first request."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_ALLOCATIONS, YOUNG_PASSES, OLDER_PASSES)


class FreedMemoryReleaser:
    """A daemon thread that calls :func:`release_freed_memory` every :data:`TRIM_EVERY_SECONDS` while the
    server runs: a burst's bodies and a pipeline run's results are freed in the middle of the arenas, where
    no threshold returns them. ``also`` runs on the same beat (the serving process passes the release of the
    engine library's pages, :func:`stacklens.warehouse.engine.release_library_pages`); ``often`` every
    ``often_every`` seconds (the embedded engine's allocator purge, a millisecond when little was freed)."""

    def __init__(
        self,
        every: float = TRIM_EVERY_SECONDS,
        also: Callable[[], object] | None = None,
        often: Callable[[], object] | None = None,
        often_every: float = TRIM_EVERY_SECONDS,
    ) -> None:
        self.every = every
        self.also = also
        self.often = often
        self.often_every = often_every if often is not None else every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if glibc() is None:
            return
        self._thread = threading.Thread(target=self._loop, name="heap-release", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        beat = min(self.every, self.often_every)
        since_trim = since_often = 0.0
        while not self._stop.wait(beat):
            since_trim += beat
            since_often += beat
            if self.often is not None and since_often >= self.often_every:
                since_often = 0.0
                self.often()
            if since_trim >= self.every:
                since_trim = 0.0
                release_freed_memory()
                if self.also is not None:
                    self.also()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
