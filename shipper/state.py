"""What the shipper knows about the log directory: open file generations, tracker entries, counters.

The scanner matches files on disk to tracker entries (by identity, see :mod:`shipper.files`), notices
files that were truncated, replaced or deleted, and keeps the figures `--status` prints.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from shipper.config import Config
from shipper.files import Tail, list_log_files
from shipper.tracker import TrackerBody, TrackerEntry, TrackerStats, TrackerStore

log = logging.getLogger(__name__)
COUNTERS = (
    "batches",
    "events",
    "accepted",
    "duplicates",
    "rejected",
    "bytes",
    "dead_lettered",
    "dead_letters_not_kept",
    "retries",
    "parked",
)
PROBLEM_BACKOFF_MAX = 30.0


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Scanner:
    def __init__(self, config: Config, store: TrackerStore) -> None:
        self.config = config
        self.store = store
        self.tails: dict[str, Tail] = {}
        self.retired: list[Tail] = []
        self.entries: dict[str, TrackerEntry] = {}
        self.stats: TrackerStats = {
            "counters": dict.fromkeys(COUNTERS, 0),
            "last_batch": None,
            "last_error": None,
            "access": {},
            "state": "starting",
        }
        self.dirty = False  # the tracker (offsets) changed: written, with fsyncs, per ``commitInterval``
        self.status_dirty = False  # only figures changed: ``status.json`` (no fsync) is enough
        self._next_scan = 0.0
        self._problems: dict[str, tuple[float, float]] = {}  # key -> (next attempt, current delay)

    # -- tracker -----------------------------------------------------------------------------------
    def load(self) -> None:
        body = self.store.load()
        self.entries = {gen: e for gen, e in body.get("files", {}).items() if isinstance(e, dict)}
        saved = body.get("stats", {})
        for name in COUNTERS:
            value = saved.get("counters", {}).get(name, 0)
            self.stats["counters"][name] = value if isinstance(value, int) else 0
        self.stats["last_batch"] = saved.get("last_batch")
        self.stats["last_error"] = saved.get("last_error")
        self.stats["state"] = "running"
        self.scan(force=True)
        # Entries no file on disk matched belong to files that are gone or changed: forget them.
        live = {tail.gen for tail in self.tails.values()} | {tail.gen for tail in self.retired}
        for gen in list(self.entries):
            if gen not in live:
                del self.entries[gen]
        self.dirty = True

    def body(self) -> TrackerBody:
        return {"files": self.entries, "stats": self.stats, "written_at": _now_iso(), "pid": os.getpid()}

    def _entry(self, tail: Tail) -> TrackerEntry:
        return {
            "path": tail.path.name,
            "dev": tail.dev,
            "ino": tail.ino,
            "head_len": tail.head_len,
            "head_hash": tail.head_hash,
            "offset": tail.committed,
            "tail_hash": tail.tail_hash(tail.committed),
            "size": tail.size() if tail.fd >= 0 else None,
            "updated_at": _now_iso(),
        }

    def _adopt(self, tail: Tail) -> None:
        for gen, entry in list(self.entries.items()):
            if entry.get("dev") != tail.dev or entry.get("ino") != tail.ino:
                continue
            if any(t.gen == gen for t in self.retired):
                continue
            if tail.matches(entry):
                tail.gen = gen
                tail.committed = int(entry["offset"])
                tail.rewind(tail.committed)
                return
            log.warning(
                "%s changed while the shipper was stopped (truncated or rewritten); reading it from the start",
                tail.path.name,
            )
            del self.entries[gen]
        self.entries[tail.gen] = self._entry(tail)

    def commit(self, batch: Any, answer: dict[str, Any] | None, dead: int, not_kept: int) -> None:
        tail = batch.tail
        tail.committed = max(tail.committed, batch.end)
        self.entries[tail.gen] = self._entry(tail)
        counters = self.stats["counters"]
        counters["dead_lettered"] += dead
        counters["dead_letters_not_kept"] += not_kept
        if answer is not None:
            counters["batches"] += 1
            counters["events"] += len(batch.lines)
            counters["bytes"] += batch.nbytes
            for name in ("accepted", "duplicates"):
                value = answer.get(name)
                counters[name] += value if isinstance(value, int) else 0
            counters["rejected"] += len(answer.get("rejected") or [])
            self.stats["last_batch"] = {
                "at": _now_iso(),
                "file": tail.path.name,
                "range": [batch.start, batch.end],
                "events": len(batch.lines),
                "batch_id": answer.get("batch_id"),
            }
        self.dirty = self.status_dirty = True
        self._prune()

    def count(self, name: str) -> None:
        self.stats["counters"][name] += 1
        self.status_dirty = True

    def error(self, message: str) -> None:
        self.stats["last_error"] = {"at": _now_iso(), "message": message}
        self.status_dirty = True

    def set_state(self, state: str) -> None:
        if self.stats["state"] != state:
            self.stats["state"] = state
            self.status_dirty = True

    # -- problems, reported once per backoff -------------------------------------------------------
    def _due(self, key: str) -> bool:
        next_at, _ = self._problems.get(key, (0.0, 0.0))
        return time.monotonic() >= next_at

    def _problem(self, key: str, message: str) -> None:
        _, delay = self._problems.get(key, (0.0, 0.5))
        delay = min(delay * 2, PROBLEM_BACKOFF_MAX)
        self._problems[key] = (time.monotonic() + delay, delay)
        log.error("%s", message)
        self.error(message)

    def _clear(self, key: str) -> None:
        if self._problems.pop(key, None) is not None:
            log.info("%s is accessible again", key)
        if self.stats["access"].pop(key, None) is not None:
            self.status_dirty = True

    def access_problem(self, key: str, detail: str) -> None:
        if self._due(key):
            self.stats["access"][key] = detail
            self.status_dirty = True
            self._problem(
                key,
                f"Storage path not accessible: {key} ({detail}); grant the shipper user read access to the logs "
                "and write access to the log directory",
            )

    # -- the directory -----------------------------------------------------------------------------
    def scan(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._next_scan:
            return
        self._next_scan = now + self.config.poll_interval
        directory = self.config.storage_path
        key = str(directory)
        try:
            paths = list_log_files(directory)
        except FileNotFoundError:
            if self._due(key):
                self._problem(
                    key,
                    f"Storage path not found: {directory} does not exist; create it (mkdir -p {directory})",
                )
            return
        except PermissionError as exc:
            self.access_problem(key, f"cannot list the directory: {exc.strerror}")
            return
        self._clear(key)
        seen = set()
        for path in paths:
            seen.add(path.name)
            tail = self.tails.get(path.name)
            if tail is not None and not self._still_same(tail, path):
                tail = None
            if tail is None:
                self._open(path)
        for name in list(self.tails):
            if name not in seen:
                self._retire(self.tails.pop(name), frozen=False, why="was deleted")
        self._prune()

    def _still_same(self, tail: Tail, path: Path) -> bool:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return True  # handled as deleted by the caller's listing next time
        if (st.st_dev, st.st_ino) != (tail.dev, tail.ino):
            self._retire(self.tails.pop(path.name), frozen=False, why="was replaced by a new file")
            return False
        if tail.changed_under_us():
            self._retire(self.tails.pop(path.name), frozen=True, why="was truncated or rewritten")
            return False
        return True

    def _open(self, path: Path) -> None:
        key = str(path)
        if not self._due(key):
            return
        try:
            tail = Tail.open(path)
        except FileNotFoundError:
            return
        except PermissionError as exc:
            self.access_problem(key, f"cannot read: {exc.strerror}")
            return
        self._clear(key)
        self._adopt(tail)
        self.tails[path.name] = tail

    def _retire(self, tail: Tail, frozen: bool, why: str) -> None:
        """A generation that ends: a deleted or replaced file is read to its end through the open descriptor;
        a truncated one cannot be (its old bytes are gone), so only what was already read is delivered."""
        log.warning(
            "%s %s; delivering what it held, then reading the new content from the start", tail.path.name, why
        )
        tail.retired = True
        tail.frozen = frozen
        self.retired.append(tail)

    def _prune(self) -> None:
        for tail in list(self.retired):
            done = tail.frozen or not tail.has_data()
            if done and tail.committed >= tail.read_pos:
                self.retired.remove(tail)
                self.entries.pop(tail.gen, None)
                tail.close()
                self.dirty = True

    def readable(self) -> list[Tail]:
        """Generations to read, oldest first: retired ones, then the day files in date order."""
        out = [t for t in self.retired if not t.frozen]
        out.extend(self.tails[name] for name in sorted(self.tails))
        return out

    def newer_has_data(self, tail: Tail) -> bool:
        order = self.readable()
        later = order[order.index(tail) + 1 :] if tail in order else []
        return any(t.has_data() for t in later)
