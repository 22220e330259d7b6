"""The front door's flush journal: what one flush is about to insert, kept on disk until every insert is done.

A flush lands the rows of many requests as several inserts (spans, transactions, events, …, then the batch
records). A process killed between two of them would leave a flush half landed: a resent transaction would not
be found by the duplicate check while its spans are already in. So a flush is written here first, whole
(a temporary file renamed into place, so a journal on disk is always complete), and removed once its last
insert returned. Every insert carries a deduplication token of its flush, so a journal found again — at the
next start, or before the next flush after a failed one — is inserted again whole and the engine lands exactly
the blocks that are missing (the tables keep a non-replicated deduplication window).

The file is the process's own, private (0600): rows are pickled tuples of encoded rows and names, never code.

A request is answered once its group's journal is written (docs/architecture.md §5: a 200 is durable), so by
default
a journal is synced before that answer: the file (``fsync``) before it is renamed into place, then the
folder, so the rename itself survives a power loss (a probe counted 161 journals written and none synced,
issue #62). Every request waiting is accepted as one group with one journal, so requests that arrive while
a sync runs share the next one: a group commit. ``STACKLENS_SPOOL_SYNC=off`` skips both syncs (a kill
still loses nothing; a power loss may lose the rows answered in the last seconds).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import logging
import os
import pickle
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SUFFIX = ".flush"
STALE_SECONDS = 60.0


@dataclass(frozen=True)
class Insert:
    """One insert of a flush: encoded ``JSONEachRow`` rows of one table and partition, with their token."""

    table: str
    columns: tuple[str, ...]
    rows: tuple[bytes, ...]
    token: str
    partition: str = ""  # the table's partition the rows fall in ('' for a table of one partition)
    # Per row, its key (organization, project, event id or dedup key): a journal inserted again skips the rows
    # already stored, so no view counts them twice. Empty for spans and batch records.
    keys: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class Unchecked:
    """Prepared rows of one organization and table, spooled before the warehouse was asked whether their keys
    are stored (an envelope's: its answer does not depend on it); the drain asks, for a whole drain at
    once."""

    org_id: int
    table: str
    columns: tuple[str, ...]
    span_columns: tuple[str, ...] | None  # the columns of the rows' spans (transactions), if any
    rows: tuple[tuple[Any, ...], ...]  # stacklens.ingest.prepare.ReadyRow


@dataclass(frozen=True)
class Journal:
    """One journal: its name, the journals it holds the rows of (a drain's), and its inserts."""

    name: str
    sources: tuple[str, ...]
    inserts: tuple[Insert, ...]
    unchecked: tuple[Unchecked, ...] = ()


def sync_folder(folder: Path) -> None:
    """Make ``folder``'s entries (a file renamed into it, created or removed) survive a power loss."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@functools.cache
def _syncfs() -> object | None:
    """libc's ``syncfs`` (Linux), looked up once on first use; None where there is none."""
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    except OSError:
        return None


def sync_filesystem(path: Path) -> None:
    """Everything written on ``path``'s filesystem, on the disk: ``syncfs`` of that filesystem alone (Linux),
    else ``os.sync``. A drain calls it before it removes the journal of rows the warehouse just wrote
    (stacklens/ingest/front_door/drain.py): the engine does not sync its parts, and a journal's removal
    must not reach the disk before the rows it held."""
    syncfs = _syncfs()
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:  # type: ignore[operator]
            raise OSError(ctypes.get_errno(), f"syncfs {path}")
    finally:
        os.close(fd)


class FlushJournal:
    """Journals of flushes in ``folder``, one file each."""

    def __init__(self, folder: Path, *, sync: bool = True) -> None:
        self.folder = folder
        self.sync = sync
        created = not folder.is_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if sync and created:
            # The folder's own entry: a journal synced into a folder that a power loss forgets is lost too.
            sync_folder(folder.parent)
        # Names are this journal's random prefix and a count: unique across processes and restarts (a name is
        # also its inserts' deduplication token, which must never repeat), without asking the system for
        # randomness per flush (each system call gives up the interpreter lock, and the acceptor waits for it
        # again behind the request threads: see write).
        self._prefix = uuid.uuid4().hex[:20]
        self._count = itertools.count()

    def new_name(self, kind: str) -> str:
        """A fresh journal name: ``kind`` ("a" for an accept group, "d" for a drain) and a unique suffix."""
        return f"{kind}-{self._prefix}{next(self._count):012x}"

    def _path(self, flush_id: str) -> Path:
        return self.folder / f"{flush_id}{SUFFIX}"

    def write(
        self,
        flush_id: str,
        inserts: list[Insert],
        sources: tuple[str, ...] = (),
        unchecked: list[Unchecked] | None = None,
    ) -> None:
        """Keep ``inserts`` until :meth:`remove`; written whole or not at all. ``sources``: the journals whose
        rows these inserts hold together (a drain), removed first when this one is found again."""
        path = self._path(flush_id)
        temporary = path.with_suffix(".tmp")
        journal = Journal(flush_id, tuple(sources), tuple(inserts), tuple(unchecked or ()))
        data = memoryview(pickle.dumps(journal, protocol=pickle.HIGHEST_PROTOCOL))
        # Four system calls and no more: each gives up the interpreter lock, and under load the writing thread
        # then waits milliseconds for it behind the request threads (a buffered file object made more calls).
        # With the syncs (the default), three more: the file's data before its name, the folder after it.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            while data:
                data = data[os.write(fd, data) :]
            if self.sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        if self.sync:
            sync_folder(self.folder)

    def remove(self, flush_id: str) -> None:
        self._path(flush_id).unlink(missing_ok=True)

    def pending(self) -> list[Journal]:
        """Journals left by flushes that did not finish, oldest first; the sources of a drain found are
        removed (the drain holds their rows)."""
        found: list[Journal] = []
        paths = sorted(self.folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime)
        for path in paths:
            try:
                with path.open("rb") as source:
                    journal = pickle.load(source)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                log.warning("front door: unreadable flush journal %s set aside: %s", path.name, exc)
                path.rename(path.with_suffix(".unreadable"))
                continue
            found.append(journal)
        for stale in self.folder.glob("*.tmp"):
            # A journal cut off while written: its flush never began. (A young one may be another process's
            # being written now.)
            with contextlib.suppress(OSError):
                if time.time() - stale.stat().st_mtime > STALE_SECONDS:
                    stale.unlink()
        drained = {name for journal in found for name in journal.sources}
        for name in drained:
            self.remove(name)
        return [journal for journal in found if journal.name not in drained]
