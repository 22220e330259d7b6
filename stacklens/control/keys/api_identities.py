"""The identity of an organization's API key, remembered while the control store is unchanged.

Every ``/api/*`` request authenticates its API key, and read through a session each time the look-up was a
quarter of a one-line ``/api/ingest`` batch's server CPU under load (0.8 of 3.2 ms an event,
``bench/RESULTS.md``). A regenerated key must be refused at once, by every process (the specification: "the
old value is invalidated immediately"), so the moment's memory that DSN keys have
(:mod:`stacklens.control.remembered`) will not do here. SQLite says exactly when to read again: ``PRAGMA
data_version`` on a connection that never writes changes whenever any other connection — of this process or
another (a CLI command, a second server) — commits to the file. An answer is reused while that number stands,
so a regeneration, a revocation or a quota change anywhere is seen by the next request; the check costs ~2 µs
against ~220 µs for the look-up. (The key-use tally commits about once a second, and each commit sends the
next request to the store again.)

PostgreSQL has no such number: there every request looks its key up, as before.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from sqlalchemy import Engine

from stacklens.control.auth import ApiKeyIdentity, verify_api_key
from stacklens.control.db import get_engine, session_scope
from stacklens.control.keys.values import hash_key
from stacklens.settings import Settings

# Answers kept per store (unknown keys too: a misconfigured shipper retries); past this many, all are dropped.
MAX_REMEMBERED = 10_000
BUSY_TIMEOUT_SECONDS = 0.01


class StoreVersion:
    """``PRAGMA data_version`` of one SQLite file, on a read-only connection of its own."""

    def __init__(self, path: Path) -> None:
        # A short busy timeout: the version is asked on the event loop, and a store that is busy (recovering
        # its WAL after a crash) answers None, which sends the request to the thread pool's full look-up.
        self._connection = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_SECONDS,
        )
        self._lock = threading.Lock()

    def current(self) -> int | None:
        """The file's version now (None when it cannot be read: then nothing is reused)."""
        try:
            with self._lock:
                row = self._connection.execute("PRAGMA data_version").fetchone()
        except sqlite3.Error:
            return None
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._connection.close()


class _Store:
    """One control store's version and the answers read at each version."""

    def __init__(self, engine: Engine, version: StoreVersion | None) -> None:
        self.engine = engine
        self.version = version
        self.lock = threading.Lock()
        self.answers: dict[str, tuple[int, ApiKeyIdentity | None]] = {}


_stores: dict[str, _Store] = {}
_stores_lock = threading.Lock()


def _store(settings: Settings) -> _Store:
    """The store of ``settings``, made again when its engine was (``dispose_engines``: tests, a restore)."""
    url = settings.resolved_database_url
    engine = get_engine(settings)
    with _stores_lock:
        store = _stores.get(url)
        if store is None or store.engine is not engine:
            if store is not None and store.version is not None:
                store.version.close()
            store = _stores[url] = _Store(engine, _version_of(engine))
        return store


def _version_of(engine: Engine) -> StoreVersion | None:
    """A version reader for a SQLite file; None for any other store (or a file that cannot be opened)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    try:
        return StoreVersion(Path(database).expanduser())
    except sqlite3.Error:
        return None


def current_api_key(settings: Settings, raw: str) -> ApiKeyIdentity | None:
    """:func:`~stacklens.control.auth.verify_api_key`'s answer for ``raw``, reused while ``settings``' control
    store has not changed since it was read (see the module doc)."""
    store = _store(settings)
    version, digest, found = _remembered(store, raw)
    if found is not None:
        return found[0]
    # The version is read before the look-up: a commit during it leaves the answer under the older version,
    # so the next request reads again.
    identity = _look_up(settings, raw)
    if version is not None:
        with store.lock:
            if len(store.answers) >= MAX_REMEMBERED:
                store.answers.clear()
            store.answers[digest] = (version, identity)
    return identity


def _remembered(store: _Store, raw: str) -> tuple[int | None, str, tuple[ApiKeyIdentity | None] | None]:
    """The store's version now, the key's digest, and the answer remembered at that version (a 1-tuple), if
    any."""
    version = store.version.current() if store.version is not None else None
    digest = hash_key(raw)  # the raw key is a secret: it is not kept as a dictionary key
    if version is None:
        return None, digest, None
    with store.lock:
        found = store.answers.get(digest)
    return version, digest, ((found[1],) if found is not None and found[0] == version else None)


def _look_up(settings: Settings, raw: str) -> ApiKeyIdentity | None:
    with session_scope(settings) as session:
        return verify_api_key(session, raw)
