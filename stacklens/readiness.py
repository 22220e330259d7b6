"""Whether this server should take traffic now (`GET /api/health/ready`), and if not, why.

Liveness (`GET /api/health`) says the process answers; readiness says a load balancer should send it requests.
A server is not ready while ingest would be refused (the disk below its floor, the front door's queue full),
while the warehouse does not answer, or while either store has migrations pending (the code expects tables the
stores do not have yet; `stacklens migrate` applies them).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Literal

from stacklens.disk_floor import disk_room
from stacklens.ingest.front_door import MAX_ROWS_WAITING, door_status
from stacklens.ingest.refusals import seconds_since_refusal
from stacklens.settings import Settings

Check = Literal["disk", "queue", "warehouse", "migrations"]
CHECKS: tuple[Check, ...] = ("disk", "queue", "warehouse", "migrations")
# A queue refusal this recent keeps the server not ready: a burst refused a second ago will be refused again.
QUEUE_REFUSAL_SECONDS = 5.0
# "Nothing pending" is believed this long (the look-up reads every migration file); a pending answer is not
# kept, so a server is ready as soon as `stacklens migrate` has run.
MIGRATIONS_CHECK_SECONDS = 10.0


@dataclass(frozen=True)
class NotReady:
    check: Check
    detail: str


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else exc.__class__.__name__)[:300]


def disk_reason(settings: Settings) -> NotReady | None:
    room = disk_room(settings)
    return NotReady("disk", room.words()) if room.below else None


def queue_reason(settings: Settings) -> NotReady | None:
    status = door_status(settings)
    waiting = status["rows_waiting"] if status else 0
    if waiting >= MAX_ROWS_WAITING:
        return NotReady("queue", f"the front door holds {waiting:,} rows waiting for the warehouse (full)")
    since = seconds_since_refusal(settings.data_dir, "queue")
    if since is not None and since < QUEUE_REFUSAL_SECONDS:
        return NotReady("queue", f"ingest was refused {since:.0f} s ago: the front door's queue was full")
    return None


def warehouse_reason(settings: Settings) -> NotReady | None:
    from stacklens.warehouse.probe import ping

    try:
        ping(settings)
    except Exception as exc:  # noqa: BLE001 - any failure means the warehouse does not answer
        return NotReady("warehouse", f"the warehouse does not answer: {_first_line(exc)}")
    return None


def pending_migrations(settings: Settings) -> list[str]:
    """Migrations the code has and the stores have not applied: ``warehouse: NNNN_…``, ``control store:
    …``."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from stacklens.control.db import MIGRATIONS_DIR, current_revision
    from stacklens.warehouse.migrations import migration_status

    pending = [f"warehouse: {state.name}" for state in migration_status(settings) if state.applied_at is None]
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    head = ScriptDirectory.from_config(config).get_current_head()
    current = current_revision(settings)
    if current != head:
        pending.append(f"control store: at {current or 'no revision'}, the code expects {head}")
    return pending


_migrations_seen: dict[tuple[str, str, str], tuple[float, NotReady | None]] = {}
_lock = threading.Lock()


def migrations_reason(settings: Settings) -> NotReady | None:
    key = (settings.resolved_warehouse_url, settings.warehouse_database, settings.resolved_database_url)
    now = time.monotonic()
    with _lock:
        seen = _migrations_seen.get(key)
    if seen is not None and now - seen[0] < MIGRATIONS_CHECK_SECONDS:
        return seen[1]
    try:
        pending = pending_migrations(settings)
        reason = (
            NotReady("migrations", f"migrations pending ({', '.join(pending)}); run `stacklens migrate`")
            if pending
            else None
        )
    except Exception as exc:  # noqa: BLE001 - a store that cannot say is not ready either
        reason = NotReady("migrations", f"the migrations could not be read: {_first_line(exc)}")
    if reason is None:
        with _lock:
            _migrations_seen[key] = (now, reason)
    return reason


def readiness(settings: Settings) -> list[NotReady]:
    """Every reason this server should not take traffic now; empty: ready."""
    reasons = [disk_reason(settings), queue_reason(settings), warehouse_reason(settings)]
    if reasons[2] is None:  # with the warehouse down its migrations cannot be read: one reason is enough
        reasons.append(migrations_reason(settings))
    return [reason for reason in reasons if reason is not None]
