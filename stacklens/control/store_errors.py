"""Which control-store failures are the store being unavailable — locked by another writer, its file or volume
refusing writes, its server gone — rather than a fault in a statement. Those answer 503 with ``Retry-After``
(the sender keeps its data and retries, as a shipper and every Sentry SDK do); anything else stays a 500,
which is logged as a bug.

SQLite reports all of them as ``OperationalError`` with a message and no code the driver exposes portably, so
the message decides; it also reports a missing table or a syntax error as ``OperationalError``, which must
stay a
500. PostgreSQL's ``OperationalError`` (psycopg) is the connection's or a lock's: unavailable, whatever it
     says."""

from __future__ import annotations

from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from stacklens.errors import Unavailable

# SQLite's words for a store that cannot answer now (sqlite3 error strings, lower-cased).
_SQLITE_UNAVAILABLE = (
    "database is locked",
    "database table is locked",
    "database is busy",
    "database schema is locked",
    "unable to open database file",
    "attempt to write a readonly database",
    "database or disk is full",
    "disk i/o error",
)
# What a refused sender is told to wait: a lock is held for seconds, a full or read-only volume for longer.
RETRY_AFTER_SECONDS = 10


class ControlStoreUnavailable(Unavailable):
    """The control store is locked or refuses writes; the request may be retried."""

    retry_after_seconds = RETRY_AFTER_SECONDS


def store_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (from SQLAlchemy) says the control store is unavailable rather than the statement
    wrong."""
    if isinstance(exc, PoolTimeout):
        return True  # every pooled connection is busy: the store is swamped, not broken
    if not isinstance(exc, OperationalError):
        return False
    if exc.connection_invalidated:
        return True
    original = exc.orig
    if type(original).__module__.startswith("psycopg"):
        return True
    message = str(original).lower()
    return any(words in message for words in _SQLITE_UNAVAILABLE)


def as_unavailable(exc: BaseException) -> ControlStoreUnavailable:
    """The answerable error for an unavailable store: its first line, without the statement and parameters
    SQLAlchemy appends (they may carry a key hash or an e-mail address)."""
    original = getattr(exc, "orig", None) or exc
    first = str(original).splitlines()[0][:200] if str(original) else type(original).__name__
    return ControlStoreUnavailable(f"the control store is unavailable ({first}); retry shortly")
