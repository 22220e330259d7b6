"""Key use counted in memory and written to `key_usage` once a second, by one writer.

Every authenticated request adds one use to its key's row of the hour (the keys page's "last used", the
limits page's events per hour). Written by each request, that is one write transaction per request: on the
embedded control store (SQLite, one writer at a time) concurrent requests queued behind each other's writes
and slept in the driver's busy wait, which cost a one-event envelope more than landing its event. So uses are
added up here and written together by a background thread every :data:`WRITE_EVERY_SECONDS`; a reader of
`key_usage` in this process writes what is pending first (:func:`write_pending`), so it always sees every use
answered so far. A process killed outright loses at most the last second of use counts (never an event).
"""

from __future__ import annotations

import atexit
import logging
import threading
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from stacklens.control.db import engine_for_url, session_scope
from stacklens.control.keys.use import KEY_KINDS, record_key_use
from stacklens.control.models import utcnow
from stacklens.errors import InvalidInput
from stacklens.settings import Settings

log = logging.getLogger(__name__)

WRITE_EVERY_SECONDS = 1.0
WRITER_THREAD_NAME = "key-use-writer"


@dataclass
class _Uses:
    org_id: int
    requests: int
    events: int
    ip: str
    user_agent: str
    at: datetime


_lock = threading.Lock()
_flushing = threading.Lock()
# Control store URL → (settings to open it with, (kind, key id, hour) → uses waiting to be written).
_pending: dict[str, tuple[Settings, dict[tuple[str, int, datetime], _Uses]]] = {}
_writer: threading.Thread | None = None


def count_key_use(
    settings: Settings,
    org_id: int,
    key_kind: str,
    key_id: int,
    *,
    requests: int = 1,
    events: int = 0,
    ip: str = "",
    user_agent: str = "",
) -> None:
    """Add uses of a key (see the module doc); written within a second."""
    global _writer
    if key_kind not in KEY_KINDS:
        raise InvalidInput(f"key_kind must be one of {KEY_KINDS}")
    now = utcnow()
    hour = now.replace(minute=0, second=0, microsecond=0)
    with _lock:
        _, uses = _pending.setdefault(settings.resolved_database_url, (settings, {}))
        found = uses.get((key_kind, key_id, hour))
        if found is None:
            uses[(key_kind, key_id, hour)] = _Uses(org_id, requests, events, ip, user_agent, now)
        else:
            found.requests += requests
            found.events += events
            found.ip, found.at = ip or found.ip, now
            found.user_agent = user_agent or found.user_agent
        if _writer is None:
            _writer = threading.Thread(target=_write_loop, name=WRITER_THREAD_NAME, daemon=True)
            _writer.start()


def write_pending(session: Session) -> None:
    """Write the uses waiting for ``session``'s database in ``session`` (a reader of `key_usage` calls this
    first)."""
    engine = session.get_bind().engine
    with _lock:
        url = next((url for url in _pending if engine_for_url(url) is engine), None)
        _, uses = _pending.pop(url, (None, {})) if url is not None else (None, {})
    _record(session, uses)


def flush_all() -> None:
    """Write every use waiting, each database in a session of its own (the writer's tick, shutdown, tests).
    One flush at a time: a caller returns once whatever the writer was writing is written too."""
    with _flushing:
        _flush_held()


def _flush_held() -> None:
    with _lock:
        batches = list(_pending.values())
        _pending.clear()
    for settings, uses in batches:
        try:
            with session_scope(settings) as session:
                _record(session, uses)
        except Exception as exc:  # noqa: BLE001 - use counts must never stop the server; say what was lost
            log.warning("key use: %d rows of use counts could not be written: %s", len(uses), exc)


def _record(session: Session, uses: dict[tuple[str, int, datetime], _Uses]) -> None:
    for (kind, key_id, _), use in sorted(uses.items(), key=lambda item: (item[0][0], item[0][1], item[0][2])):
        record_key_use(
            session,
            use.org_id,
            kind,
            key_id,
            requests=use.requests,
            events=use.events,
            ip=use.ip,
            user_agent=use.user_agent,
            at=use.at,
        )


def _write_loop() -> None:
    global _writer
    while True:
        threading.Event().wait(WRITE_EVERY_SECONDS)
        flush_all()
        with _lock:
            if not _pending:
                _writer = None
                return


atexit.register(flush_all)
