"""Appending log lines to ``<storage_path>/stacklens-YYYY-MM-DD.log``.

Every line is one JSON object (the log-line format the shipper reads) written with a single ``os.write()``
on a descriptor opened ``O_APPEND``: the kernel positions each append at the end of the file atomically, so
threads of one process and separate worker processes writing the same file never interleave.

The writer never raises into the application. A full disk, a removed file or a removed directory is reported
once through the ``stacklens_sdk`` logger; the directory is recreated on the next write and the recovery is
reported too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import stat
import threading
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

logger = logging.getLogger(__name__)

LOG_FILE_PREFIX = "stacklens-"
LOG_FILE_SUFFIX = ".log"
DEFAULT_MAX_LINE_BYTES = 1024 * 1024
FILE_MODE = 0o640
# Group may enter, read the logs and write the shipper's tracker.json; others get nothing.
DIRECTORY_MODE = 0o770
LINE_VERSION = 1

_OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


class LineTooLarge(ValueError):
    """The encoded line is longer than the writer's limit; it was not written."""


class WriteFailed(OSError):
    """The line could not be written (disk full, directory gone and not recreatable, …)."""


def log_file_name(when: datetime) -> str:
    """File name for a write at ``when`` (an aware UTC datetime)."""
    return f"{LOG_FILE_PREFIX}{when.strftime('%Y-%m-%d')}{LOG_FILE_SUFFIX}"


def format_ts(when: datetime) -> str:
    """UTC ISO 8601 with milliseconds and ``Z``, e.g. ``2026-11-21T19:22:03.123Z``."""
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _finite(value: Any) -> Any:
    """Replace NaN/Infinity (not JSON) with None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def encode_line(item_type: str, app_key: str, payload: Any, when: datetime) -> bytes:
    """Encode one log line (docs/architecture.md §11.1), ``\\n``-terminated UTF-8."""
    line = {
        "v": LINE_VERSION,
        "type": item_type,
        "app_key": app_key,
        "ts": format_ts(when),
        "payload": payload,
    }
    try:
        text = json.dumps(line, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        text = json.dumps(_finite(line), ensure_ascii=False, allow_nan=False, default=str)
    return (text + "\n").encode("utf-8")


class LogWriter:
    """Appends log lines to the daily file of one storage directory (thread- and fork-safe)."""

    def __init__(self, storage_path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.storage_path = os.path.abspath(storage_path)
        self.max_line_bytes = max_line_bytes
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._name: str | None = None
        self._identity: tuple[int, int] | None = None
        self._failing: str | None = None
        _WRITERS.add(self)

    # -- public -------------------------------------------------------------------------------------------

    def write(
        self, item_type: str, app_key: str, payload: Any, *, now: Callable[[], datetime] | None = None
    ) -> int:
        """Write one line; returns its length in bytes.

        Raises ``LineTooLarge`` (nothing written) or ``WriteFailed`` (reported once through the logger); both
        are for the transport to count — neither must reach the application.
        """
        when = (now or _utcnow)()
        data = encode_line(item_type, app_key, payload, when)
        if len(data) > self.max_line_bytes:
            raise LineTooLarge(f"log line of {len(data)} bytes is over the {self.max_line_bytes}-byte limit")
        failure: OSError | None = None
        with self._lock:
            try:
                fd = self._descriptor(log_file_name(when))
                written = os.write(fd, data)
                if written != len(data):
                    # A short write only happens when the disk fills mid-line. End the fragment so the next
                    # line starts clean; the shipper skips the torn line as invalid JSON.
                    _best_effort_write(fd, b"\n")
                    raise OSError(28, "No space left on device (short write)")
            except OSError as exc:
                self._close()
                failure = exc
        # Report outside the lock: a logging handler may itself capture an event and write a line.
        if failure is not None:
            self._report_failure(failure)
            raise WriteFailed(failure.errno, str(failure)) from failure
        self._report_recovery()
        return written

    def close(self) -> None:
        """Close the open descriptor (the next write reopens it)."""
        with self._lock:
            self._close()

    # -- internals ----------------------------------------------------------------------------------------

    def _descriptor(self, name: str) -> int:
        path = os.path.join(self.storage_path, name)
        if self._fd is not None and self._name == name:
            # One stat per write notices a file (or its directory) removed or rotated under us; without it the
            # lines would go on into an unlinked inode and be lost.
            try:
                st = os.stat(path)
                if (st.st_dev, st.st_ino) == self._identity:
                    return self._fd
            except FileNotFoundError:
                pass
        self._close()
        try:
            fd = self._open(path)
        except FileNotFoundError:
            # The directory itself was removed: recreate it like init() did, then try once more.
            os.makedirs(self.storage_path, mode=DIRECTORY_MODE, exist_ok=True)
            fd = self._open(path)
        st = os.fstat(fd)
        self._fd, self._name, self._identity = fd, name, (st.st_dev, st.st_ino)
        return fd

    @staticmethod
    def _open(path: str) -> int:
        try:
            fd = os.open(path, _OPEN_FLAGS | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            return os.open(path, _OPEN_FLAGS, FILE_MODE)
        # We created it: make the mode exactly 0640 whatever the process umask is.
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
        return fd

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = self._name = self._identity = None

    def _report_failure(self, exc: OSError) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        first, self._failing = self._failing is None, reason
        if first:
            logger.error(
                "Cannot write to the log directory %s (%s); events are dropped until it is writable again",
                self.storage_path,
                reason,
            )

    def _report_recovery(self) -> None:
        if self._failing is not None:
            self._failing = None
            logger.warning("Writing to the log directory %s again", self.storage_path)

    def _after_fork(self) -> None:
        # The lock may have been held by a thread that does not exist in the child.
        self._lock = threading.Lock()


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _best_effort_write(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, data)


_WRITERS: weakref.WeakSet[LogWriter] = weakref.WeakSet()
_SHARED: dict[tuple[str, int], LogWriter] = {}
_SHARED_LOCK = threading.Lock()


def shared_writer(storage_path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> LogWriter:
    """The process-wide writer of a directory, shared by the transport and the browser tunnel."""
    key = (os.path.abspath(storage_path), max_line_bytes)
    with _SHARED_LOCK:
        writer = _SHARED.get(key)
        if writer is None:
            writer = _SHARED[key] = LogWriter(storage_path, max_line_bytes)
        return writer


def _reinit_after_fork() -> None:
    global _SHARED_LOCK
    _SHARED_LOCK = threading.Lock()
    for writer in list(_WRITERS):
        writer._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reinit_after_fork)
