"""A claim on one project's issue grouping, held while a merge or a split changes it (issue #62).

A merge reads which fingerprints sit in which issue, records overrides, then clears and feeds again the
moved issues' insert-time tables. Two of them over the same issues at once both read the state before either
wrote it: an override pointing an issue at itself, counters fed twice, a fingerprint split for good. So a
merge or split first claims its project, and a second one while the first runs is refused
(:class:`GroupingBusy`, 409) rather than run on what the first is changing: it is sent again once the
first is done, and then sees its result.

The claim holds across the installation's processes (several API workers, the CLI), and a process that dies
holding it gives it up with its connection or its file:

- PostgreSQL: a session-level advisory lock on a connection of its own, keyed by the schema and the project
  (tests share one database in many schemas), unlocked at the end;
- SQLite: ``flock`` on a file per project beside the database file (the database is one host's, so every
  process that writes it sees the same file). Not the database's write transaction: that would stop every
  other write of the installation for the seconds a merge takes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from stacklens.errors import Conflict

# Claims of a SQLite store without a file (in memory): one process's, so a lock of the process's is enough.
_memory_claims: dict[tuple[str, int], threading.Lock] = {}
_memory_lock = threading.Lock()

# The advisory lock's key: the schema and project, hashed to the lock's 64-bit space.
_PG_KEY = "hashtextextended(current_schema() || '/stacklens-issue-grouping/' || CAST(:project AS text), 0)"


class GroupingBusy(Conflict):
    """Another merge or split of the project's issues is running."""


def _busy(project_id: int) -> GroupingBusy:
    return GroupingBusy(
        f"another merge or split of this project's issues is in progress (project {project_id}); "
        "nothing was changed: send it again once that one is done"
    )


@contextlib.contextmanager
def grouping_claimed(session: Session, project_id: int) -> Iterator[None]:
    """Hold the claim on ``project_id``'s grouping for the block; :class:`GroupingBusy` at once when another
    merge or split of the project holds it (in this process or another)."""
    bind = session.get_bind()
    engine = bind if isinstance(bind, Engine) else bind.engine
    if engine.dialect.name == "postgresql":
        with _postgres_claim(engine, project_id):
            yield
        return
    database = engine.url.database or ""
    if database in ("", ":memory:") or database.startswith("file::memory:"):
        with _memory_claim(str(engine.url), project_id):
            yield
        return
    with _file_claim(Path(database), project_id):
        yield


@contextlib.contextmanager
def _postgres_claim(engine: Engine, project_id: int) -> Iterator[None]:
    connection = engine.connect()
    try:
        got = connection.execute(
            text(f"SELECT pg_try_advisory_lock({_PG_KEY})"), {"project": str(project_id)}
        )
        connection.commit()  # the lock is the session's; no transaction stays open while the merge runs
        if not got.scalar():
            raise _busy(project_id)
        try:
            yield
        finally:
            try:
                connection.execute(
                    text(f"SELECT pg_advisory_unlock({_PG_KEY})"), {"project": str(project_id)}
                )
                connection.commit()
            except Exception:
                # A connection whose lock may still be held must never go back to the pool: closed, its
                # session ends and the lock with it.
                connection.invalidate()
                raise
    finally:
        connection.close()


@contextlib.contextmanager
def _file_claim(database: Path, project_id: int) -> Iterator[None]:
    folder = database.parent / f"{database.name}.grouping-claims"
    folder.mkdir(mode=0o700, exist_ok=True)
    # flock belongs to the open file: two threads of one process opening it conflict as two processes do.
    fd = os.open(folder / f"{int(project_id)}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(project_id) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _memory_claim(url: str, project_id: int) -> Iterator[None]:
    with _memory_lock:
        lock = _memory_claims.setdefault((url, project_id), threading.Lock())
    if not lock.acquire(blocking=False):
        raise _busy(project_id)
    try:
        yield
    finally:
        lock.release()
