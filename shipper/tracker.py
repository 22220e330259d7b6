"""`tracker.json`: what has been delivered, written so that a crash or power cut never corrupts it.

Each write is a new generation: the JSON goes to a temporary file which is fsynced, the current file is
hard-linked as ``tracker.json.bak`` (the previous generation), the temporary file is renamed over
``tracker.json`` and the directory is fsynced. ``tracker.json`` therefore always exists once written and
always holds a complete generation. Each generation carries a format version and a SHA-256 of its body; one
that does not parse or whose checksum is wrong is set aside as ``tracker.json.corrupt-<time>`` and the
backup is used instead. A tracker the operator removed means "deliver everything again" (spec, Local
storage rule 2): the backup is then set aside too, never silently used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NotRequired, TypedDict, cast

from shipper import faults

FORMAT_VERSION = 1
log = logging.getLogger(__name__)


class TrackerUnwritable(Exception):
    """The tracker directory cannot be written."""


class TrackerEntry(TypedDict):
    """What has been delivered of one file generation: its identity (device, inode, a hash of its head) and
    the offset up to which the service has its lines, with a hash of the bytes before it."""

    path: str
    dev: int
    ino: int
    head_len: int
    head_hash: str
    offset: int
    tail_hash: str
    size: int | None  # None when the file was no longer open
    updated_at: str


class LastBatch(TypedDict):
    at: str
    file: str
    range: list[int]  # [start, end) byte offsets in the file
    events: int
    batch_id: str | None  # the service's id of the batch


class LastError(TypedDict):
    at: str
    message: str


class TrackerStats(TypedDict, total=False):
    """The figures `--status` shows; empty in a new tracker."""

    counters: dict[str, int]  # shipper.state.COUNTERS
    last_batch: LastBatch | None
    last_error: LastError | None
    access: dict[str, str]  # path -> why it cannot be read or written, while it cannot
    state: str  # starting, running, …


class TrackerBody(TypedDict):
    """One generation: the entries by generation id, the figures, and when and by which process it was
    written."""

    files: dict[str, TrackerEntry]
    stats: TrackerStats
    written_at: NotRequired[str]
    pid: NotRequired[int]


def _checksum(body: Mapping[str, object]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def encode(body: TrackerBody) -> bytes:
    document = {"version": FORMAT_VERSION, "checksum": _checksum(body), "body": body}
    return json.dumps(document, sort_keys=True, indent=1).encode() + b"\n"


def decode(data: bytes) -> TrackerBody:
    """Parse one generation; raise ValueError when it is not a complete, intact tracker."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({exc.__class__.__name__})") from None
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        raise ValueError("unknown format version")
    body = document.get("body")
    if not isinstance(body, dict) or document.get("checksum") != _checksum(body):
        raise ValueError("checksum mismatch")
    if not isinstance(body.get("files"), dict):
        raise ValueError("no file table")
    return cast(TrackerBody, body)  # intact: a body this shipper wrote


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class TrackerStore:
    """Reads and writes generations of ``tracker.json`` in one directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.backup = path.with_name(path.name + ".bak")
        self.tmp = path.with_name(path.name + ".tmp")

    def check_writable(self) -> None:
        """Raise :class:`TrackerUnwritable` unless a file can be created, synced and removed beside the
        tracker."""
        probe = self.path.with_name(f".{self.path.name}.probe-{os.getpid()}")
        try:
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, b"probe")
                os.fsync(fd)
            finally:
                os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise TrackerUnwritable(f"{self.path.parent}: {exc.strerror or exc}") from None

    def _set_aside(self, path: Path, reason: str) -> None:
        target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(path, target)
            log.warning("%s is unusable (%s); set aside as %s", path, reason, target.name)

    def _read(self, path: Path) -> TrackerBody | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return decode(data)
        except ValueError as exc:
            self._set_aside(path, str(exc))
            return None

    def load(self) -> TrackerBody:
        """The newest intact generation, or an empty tracker (everything is delivered again)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)  # a write that never completed; the real file is untouched
        if not self.path.exists():
            if self.backup.exists():
                self._set_aside(self.backup, "tracker.json was removed, so every log file is delivered again")
            return {"files": {}, "stats": {}}
        body = self._read(self.path)
        if body is not None:
            return body
        body = self._read(self.backup)
        if body is not None:
            log.warning("recovered the tracker from %s (the previous generation)", self.backup.name)
            return body
        log.warning(
            "no intact tracker generation; every log file is delivered again (the service drops duplicates)"
        )
        return {"files": {}, "stats": {}}

    def save(self, body: TrackerBody) -> None:
        """Write ``body`` as the new generation (see the module docstring for the order)."""
        data = encode(body)
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            half = len(data) // 2
            os.write(fd, data[:half])
            faults.hit("mid_tracker_write")
            view = memoryview(data)[half:]
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if self.path.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.backup)
            try:
                os.link(self.path, self.backup)
            except OSError:  # file systems without hard links: a copy is as good
                self.backup.write_bytes(self.path.read_bytes())
        os.replace(self.tmp, self.path)
        faults.hit("after_tracker_write")
        _fsync_dir(self.path.parent)
