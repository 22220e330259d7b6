"""`--status`: what the running shipper last published, compared with the files on disk.

The tracker is written with two fsyncs, so it is throttled to ``commitInterval`` while busy. The figures
`--status` shows (counters, last batch, last error, acknowledged offsets) are also published in
``status.json`` beside it: same format and checksum, written atomically (temporary file, rename) but
without fsync, at most every :data:`STATUS_INTERVAL` while busy and at once before the shipper waits. A
power cut can only lose that file, never the tracker; `--status` then falls back to the tracker.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import NotRequired, Required, TypedDict

from shipper.config import Config
from shipper.deadletters import JOURNAL_NAME, DeadLetterFile
from shipper.files import LOG_NAME_RE
from shipper.tracker import LastBatch, LastError, TrackerBody, decode, encode

LAG_COUNT_CHUNK = 1024 * 1024
STATUS_NAME = "status.json"
# Half a second: `--status` is current within about a second, for at most two small writes a second.
STATUS_INTERVAL = 0.5


class FileStatus(TypedDict, total=False):
    """One log file: its name, and its identity, offset, size and lag unless it cannot be read (``error``)."""

    file: Required[str]
    identity: str  # device:inode:head hash
    offset: int
    size: int
    lag_bytes: int
    lag_lines: int | None  # None when the file cannot be read
    error: str | None


class Pending(TypedDict):
    bytes: int
    lines: int


class DeadLetters(TypedDict):
    """How full ``deadletter.ndjson`` is, or why it cannot be read (``error``)."""

    path: str
    error: NotRequired[str | None]
    lines: NotRequired[int]
    bytes: NotRequired[int]
    max_bytes: NotRequired[int]
    resend_interrupted: NotRequired[bool]


class Status(TypedDict):
    """`--status` (``--json`` prints it as it is)."""

    storage_path: str
    files: list[FileStatus]
    problems: list[str]
    pending: Pending
    state: str | None
    last_batch: LastBatch | None
    last_error: LastError | None
    access: dict[str, str]
    counters: dict[str, int]
    tracker_written_at: str | None
    status_written_at: str | None
    dead_letters: DeadLetters


def status_path(config: Config) -> Path:
    return config.storage_path / STATUS_NAME


def publish(path: Path, body: TrackerBody) -> None:
    """Replace ``status.json`` atomically (no fsync: it is a view, the tracker is the record)."""
    tmp = path.with_name(path.name + ".tmp")
    data = encode(body)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _fresher_status(config: Config, tracker_mtime: int) -> TrackerBody | None:
    """``status.json`` when it is intact and not older than the tracker, else None."""
    path = status_path(config)
    with contextlib.suppress(OSError, ValueError):
        if os.stat(path).st_mtime_ns >= tracker_mtime:
            return decode(path.read_bytes())
    return None


def _count_lines(path: str, offset: int, size: int) -> int:
    count = 0
    with open(path, "rb") as fh:
        fh.seek(offset)
        remaining = size - offset
        while remaining > 0:
            chunk = fh.read(min(LAG_COUNT_CHUNK, remaining))
            if not chunk:
                break
            count += chunk.count(b"\n")
            remaining -= len(chunk)
    return count


def collect(config: Config) -> Status:
    """Figures per file and overall; reads ``tracker.json`` (never writes it)."""
    directory = config.storage_path
    files: list[FileStatus] = []
    problems: list[str] = []
    body: TrackerBody = {"files": {}, "stats": {}}
    tracker_written_at = None
    try:
        body = decode(config.tracker_path.read_bytes())
        tracker_written_at = body.get("written_at")
        # The tracker's mtime, taken after reading it: a status file at least as new carries its offsets or
        # later.
        body = _fresher_status(config, os.stat(config.tracker_path).st_mtime_ns) or body
    except FileNotFoundError:
        problems.append("no tracker.json yet: every log file will be delivered")
    except PermissionError:
        problems.append(f"Storage path not accessible: cannot read {config.tracker_path}")
    except ValueError as exc:
        problems.append(f"tracker.json is unusable ({exc}); the shipper recovers it from the backup on start")
    by_ident = {(e.get("dev"), e.get("ino")): e for e in body.get("files", {}).values()}
    pending_bytes = pending_lines = 0
    try:
        names = sorted(n for n in os.listdir(directory) if LOG_NAME_RE.match(n))
    except FileNotFoundError:
        names = []
        problems.append(f"Storage path not found: {directory} does not exist; create it")
    except PermissionError:
        names = []
        problems.append(f"Storage path not accessible: cannot list {directory}")
    for name in names:
        path = os.path.join(directory, name)
        row: FileStatus = {"file": name}
        try:
            st = os.stat(path)
        except OSError as exc:
            row["error"] = exc.strerror
            files.append(row)
            continue
        entry = by_ident.get((st.st_dev, st.st_ino))
        offset = int(entry["offset"]) if entry and entry.get("offset", 0) <= st.st_size else 0
        head_hash = entry.get("head_hash", "") if entry else ""
        row["identity"] = f"{st.st_dev}:{st.st_ino}:{head_hash[:12]}"
        row["offset"] = offset
        row["size"] = st.st_size
        row["lag_bytes"] = st.st_size - offset
        try:
            row["lag_lines"] = _count_lines(path, offset, st.st_size)
        except PermissionError:
            row["error"] = "Storage path not accessible (cannot read)"
            row["lag_lines"] = None
        pending_bytes += row["lag_bytes"]
        pending_lines += row["lag_lines"] or 0
        files.append(row)
    stats = body.get("stats", {})
    return {
        "storage_path": str(directory),
        "files": files,
        "problems": problems,
        "pending": {"bytes": pending_bytes, "lines": pending_lines},
        "state": stats.get("state"),
        "last_batch": stats.get("last_batch"),
        "last_error": stats.get("last_error"),
        "access": stats.get("access") or {},
        "counters": stats.get("counters") or {},
        "tracker_written_at": tracker_written_at,
        "status_written_at": body.get("written_at"),
        "dead_letters": _dead_letters(config),
    }


def _dead_letters(config: Config) -> DeadLetters:
    """How full ``deadletter.ndjson`` is, and whether a resend was interrupted."""
    dead = DeadLetterFile(config.storage_path, config.max_dead_letter_bytes)
    try:
        records, size = dead.figures()
        interrupted = os.path.getsize(config.storage_path / JOURNAL_NAME) > 0
    except FileNotFoundError:
        interrupted = False
    except OSError as exc:
        return {"path": str(dead.path), "error": exc.strerror}
    return {
        "path": str(dead.path),
        "lines": records,
        "bytes": size,
        "max_bytes": config.max_dead_letter_bytes,
        "resend_interrupted": interrupted,
    }


def render(status: Status) -> str:
    lines = [f"Storage path: {status['storage_path']}"]
    for problem in status["problems"]:
        lines.append(f"  ! {problem}")
    lines.append("Files:")
    if not status["files"]:
        lines.append("  (no stacklens-YYYY-MM-DD.log files)")
    for row in status["files"]:
        if "identity" not in row:
            lines.append(f"  {row['file']}: {row.get('error')}")
            continue
        lag_lines = "?" if row.get("lag_lines") is None else row["lag_lines"]
        extra = f"  ! {row['error']}" if row.get("error") else ""
        lines.append(
            f"  {row['file']}  identity {row['identity']}  offset {row['offset']}  size {row['size']}  "
            f"lag {row['lag_bytes']} bytes / {lag_lines} lines{extra}"
        )
    pending = status.get("pending", {})
    lines.append(f"Pending: {pending.get('bytes', 0)} bytes, {pending.get('lines', 0)} lines")
    lines.append(
        f"State: {status.get('state') or 'unknown'} (figures of {status.get('status_written_at') or 'never'}, "
        f"tracker written {status.get('tracker_written_at') or 'never'})"
    )
    batch = status.get("last_batch")
    lines.append(
        "Last successful batch: "
        + (
            f"{batch['at']} {batch['events']} events from {batch['file']} {batch['range']}"
            if batch
            else "none"
        )
    )
    error = status.get("last_error")
    lines.append("Last error: " + (f"{error['at']} {error['message']}" if error else "none"))
    for path, detail in status.get("access", {}).items():
        lines.append(f"Not accessible: {path} ({detail})")
    dead = status.get("dead_letters") or {}
    if dead.get("error"):
        lines.append(f"Dead letters: {dead['path']} cannot be read ({dead['error']})")
    elif dead:
        lines.append(
            f"Dead letters: {dead['lines']} lines, {dead['bytes']} of {dead['max_bytes']} bytes ({dead['path']})"
            + (
                "; a resend was interrupted: run --resend-dead-letters to finish it"
                if dead["resend_interrupted"]
                else ""
            )
        )
    counters = status.get("counters", {})
    lines.append("Counters: " + (", ".join(f"{k} {v}" for k, v in counters.items()) or "none"))
    return "\n".join(lines)
