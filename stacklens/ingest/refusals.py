"""When this process last refused ingest, and why (``disk``: below the floor; ``queue``: the front door full).

The entrances note each refusal here; readiness and the service's own alerts (stacklens/self_watch) read
how long ago the last one was. Kept per data directory (one per server; a test process runs several), not
per organization: a refusal is about the server."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Literal

Reason = Literal["disk", "queue"]

_last: dict[tuple[Path, str], float] = {}
_lock = threading.Lock()


def note_refusal(data_dir: Path, reason: Reason) -> None:
    with _lock:
        _last[(data_dir, reason)] = time.monotonic()


def seconds_since_refusal(data_dir: Path, reason: Reason) -> float | None:
    """Seconds since the server of ``data_dir`` last refused ingest for ``reason``; ``None``: never."""
    with _lock:
        at = _last.get((data_dir, reason))
    return None if at is None else time.monotonic() - at
