"""The serving process's heap: the cyclic garbage collector (what the server built at start set aside, young
objects collected less often) and the C allocator (freed memory given back to the system).

A one-event request allocates a few thousand short-lived objects (the parsed event, its rows); with the
interpreter's default thresholds (700, 10, 10) the collector ran a young pass every few requests and an
older one every few dozen, and each older pass walked the ~280,000 objects the app, its routes and its
libraries made at start. Measured with the peer benchmark's 3,000 one-event envelopes: 0.5 s of the
server's CPU went to the collector (about 5 % of it), 0.035 s with the objects of the start frozen and the
thresholds below. Nearly everything a request allocates is freed by reference counting as it ends; the
collector is only for cycles, which a later pass still finds."""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from collections.abc import Callable
from typing import Any

# A young pass per this many net allocations (the default 700), an older one per this many young passes.
YOUNG_ALLOCATIONS = 10_000
YOUNG_PASSES = 50
OLDER_PASSES = 1_000


def settle_heap() -> None:
    """Collect once, set aside every object alive now (the app built, its imports) so no later pass walks
    them, and raise the thresholds. Called once the app is built, before the first request."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_ALLOCATIONS, YOUNG_PASSES, OLDER_PASSES)


# The C allocator (glibc's malloc), which holds every Python object larger than 512 bytes (request bodies,
# JSON, rows): with its defaults it keeps what the process freed. Each thread that allocates gets an arena of
# its own (up to 8 per core), a freed block inside an arena stays the process's until the arena's top is free,
# and after a large block is freed the size above which blocks get a mapping of their own rises to it (up to
# 32 MiB), so the next bodies of that size land in the arenas too. Measured under the demo's load: 94 MB held
# in 16 arenas for 63 MB in use, and one malloc_trim(0) gave back 54 MiB of the server's resident memory.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
ARENAS = 2  # the GIL lets one thread at a time run Python: two arenas keep the allocator's lock cool
MAPPED_ABOVE = 256 * 1024  # blocks from here up get their own mapping, returned as soon as they are freed
TRIM_ABOVE = 1024 * 1024  # free memory at an arena's top past this goes back at once
TRIM_EVERY_SECONDS = 30.0  # free blocks inside the arenas go back this often (malloc_trim: a few ms)


def _glibc() -> Any | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "malloc_trim") or not hasattr(libc, "mallopt"):
            return None  # another C library (musl): it keeps no arenas of this kind
    except OSError:
        return None
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    return libc


def tune_allocator() -> bool:
    """Fixed thresholds and two arenas for the C allocator, so freed memory goes back instead of staying the
    process's. Called once as the server starts, before its threads (arenas are made per thread on first
    use). False where the C library is not glibc."""
    libc = _glibc()
    if libc is None:
        return False
    return all(
        libc.mallopt(option, value) == 1
        for option, value in (
            (_M_ARENA_MAX, ARENAS),
            (_M_MMAP_THRESHOLD, MAPPED_ABOVE),
            (_M_TRIM_THRESHOLD, TRIM_ABOVE),
        )
    )


def release_freed_memory() -> bool:
    """Give the free blocks inside the C allocator's arenas back to the system (glibc's malloc_trim); True
    when some memory was returned."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


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
        if _glibc() is None:
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
