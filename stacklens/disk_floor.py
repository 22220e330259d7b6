"""The disk floor: while the data directory's volume has less free space than ``STACKLENS_DISK_FLOOR``, every
entrance refuses with 503 and ``Retry-After`` before anything is written (docs/architecture.md §5).

A full disk is the one failure the front door cannot ride out: its spool, the warehouse's parts and the
control store all live on that volume, and a write that fails half way costs more than a refusal the sender
retries (the shipper keeps its lines and comes back). The floor leaves room for what is already accepted to
drain.

The floor is bytes (``1073741824``, ``500MiB``, ``2GB``) or a share of the volume (``5%``); unset, the smaller
of 1 GiB and 5 %: a 1 TB volume keeps 1 GiB, a 10 GiB one 512 MiB. Free space is read with ``os.statvfs``
(microseconds) and kept for a second, so a busy entrance reads it about once a second.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from stacklens.disk_floor_setting import format_bytes, parse_floor
from stacklens.errors import Unavailable
from stacklens.settings import Settings

log = logging.getLogger(__name__)

# How long one reading of the volume is believed: a second of writes past the floor is a few MiB at most.
CHECK_SECONDS = 1.0
# How often a refusal's detail (the path and free space) goes to the server log, at most: every refused
# request would otherwise write a line while the disk stays full.
LOG_SECONDS = 60.0
# What a refused sender is told to wait: room is made by an operator (minutes), but once it is there the
# backlog should land soon, and a retry costs the service one cached look-up.
RETRY_AFTER_SECONDS = 10


@dataclass(frozen=True)
class DiskRoom:
    """One reading of the data directory's volume."""

    path: Path
    free: int  # bytes available to the service (statvfs f_bavail: what root's reserve leaves)
    total: int
    floor: int

    @property
    def below(self) -> bool:
        return self.free < self.floor

    def words(self) -> str:
        return (
            f"the data directory's volume ({self.path}) has {format_bytes(self.free)} free, below its floor of "
            f"{format_bytes(self.floor)} (STACKLENS_DISK_FLOOR)"
        )


class DiskFull(Unavailable):
    """The data directory's volume is below its floor: nothing is taken until space is made."""

    retry_after_seconds = RETRY_AFTER_SECONDS


# (data directory, floor setting) -> (read at, reading): two settings on one directory (tests) keep their own.
_readings: dict[tuple[Path, str | None], tuple[float, DiskRoom]] = {}
_logged: dict[Path, float] = {}
_lock = threading.Lock()


def _existing(path: Path) -> Path:
    """``path``, or its nearest existing parent (a data directory not created yet sits on that volume)."""
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def read_disk_room(settings: Settings) -> DiskRoom:
    """The volume of ``settings.data_dir`` now (no cache)."""
    path = _existing(settings.data_dir)
    stat = os.statvfs(path)
    total = stat.f_blocks * stat.f_frsize
    floor = parse_floor(settings.disk_floor).bytes_for(total)
    return DiskRoom(settings.data_dir, stat.f_bavail * stat.f_frsize, total, floor)


def disk_room(settings: Settings) -> DiskRoom:
    """The volume of ``settings.data_dir``, read at most once per ``CHECK_SECONDS``."""
    now = time.monotonic()
    key = (settings.data_dir, settings.disk_floor)
    with _lock:
        cached = _readings.get(key)
    if cached is not None and now - cached[0] < CHECK_SECONDS:
        return cached[1]
    room = read_disk_room(settings)
    with _lock:
        _readings[key] = (now, room)
    return room


def require_disk_room(settings: Settings) -> None:
    """Refuse (:class:`DiskFull`: 503 with Retry-After) while the data directory's volume is below its floor.
    Every entrance calls this first, before it reads the body or writes anything.

    The answer goes to whoever holds a DSN key (public in every browser bundle), so it names neither the data
    directory nor the free space: the detail goes to the server log (once a minute at most), the signed-in
    readiness answer, the operations page and the owners' service alert."""
    room = disk_room(settings)
    if room.below:
        from stacklens.ingest.refusals import note_refusal

        note_refusal(settings.data_dir, "disk")
        now = time.monotonic()
        with _lock:
            quiet = now - _logged.get(settings.data_dir, -LOG_SECONDS) >= LOG_SECONDS
            if quiet:
                _logged[settings.data_dir] = now
        if quiet:
            log.warning("ingest refused: %s", room.words())
        raise DiskFull("the service's disk is below its floor: nothing was stored, retry after space is made")
