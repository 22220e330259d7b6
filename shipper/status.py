"""`--status`: what the tracker says, compared with the files on disk."""

from __future__ import annotations

import os
from typing import Any

from shipper.config import Config
from shipper.files import LOG_NAME_RE
from shipper.tracker import decode

LAG_COUNT_CHUNK = 1024 * 1024


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


def collect(config: Config) -> dict[str, Any]:
    """Figures per file and overall; reads ``tracker.json`` (never writes it)."""
    directory = config.storage_path
    result: dict[str, Any] = {"storage_path": str(directory), "files": [], "problems": []}
    body: dict[str, Any] = {"files": {}, "stats": {}}
    try:
        body = decode(config.tracker_path.read_bytes())
    except FileNotFoundError:
        result["problems"].append("no tracker.json yet: every log file will be delivered")
    except PermissionError:
        result["problems"].append(f"Storage path not accessible: cannot read {config.tracker_path}")
    except ValueError as exc:
        result["problems"].append(
            f"tracker.json is unusable ({exc}); the shipper recovers it from the backup on start"
        )
    by_ident = {(e.get("dev"), e.get("ino")): e for e in body.get("files", {}).values()}
    pending_bytes = pending_lines = 0
    try:
        names = sorted(n for n in os.listdir(directory) if LOG_NAME_RE.match(n))
    except FileNotFoundError:
        names = []
        result["problems"].append(f"Storage path not found: {directory} does not exist; create it")
    except PermissionError:
        names = []
        result["problems"].append(f"Storage path not accessible: cannot list {directory}")
    for name in names:
        path = os.path.join(directory, name)
        row: dict[str, Any] = {"file": name}
        try:
            st = os.stat(path)
        except OSError as exc:
            row["error"] = exc.strerror
            result["files"].append(row)
            continue
        entry = by_ident.get((st.st_dev, st.st_ino))
        offset = int(entry["offset"]) if entry and entry.get("offset", 0) <= st.st_size else 0
        row.update(
            identity=f"{st.st_dev}:{st.st_ino}:{(entry or {}).get('head_hash', '')[:12]}",
            offset=offset,
            size=st.st_size,
            lag_bytes=st.st_size - offset,
        )
        try:
            row["lag_lines"] = _count_lines(path, offset, st.st_size)
        except PermissionError:
            row["error"] = "Storage path not accessible (cannot read)"
            row["lag_lines"] = None
        pending_bytes += row["lag_bytes"]
        pending_lines += row["lag_lines"] or 0
        result["files"].append(row)
    stats = body.get("stats", {})
    result.update(
        pending={"bytes": pending_bytes, "lines": pending_lines},
        state=stats.get("state"),
        last_batch=stats.get("last_batch"),
        last_error=stats.get("last_error"),
        access=stats.get("access") or {},
        counters=stats.get("counters") or {},
        tracker_written_at=body.get("written_at"),
    )
    return result


def render(status: dict[str, Any]) -> str:
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
        f"State: {status.get('state') or 'unknown'} (tracker written {status.get('tracker_written_at') or 'never'})"
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
    counters = status.get("counters", {})
    lines.append("Counters: " + (", ".join(f"{k} {v}" for k, v in counters.items()) or "none"))
    return "\n".join(lines)
