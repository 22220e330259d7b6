"""``deadletter.ndjson``: the lines the shipper passed over, kept whole so they can be resent.

One JSON object per line::

    {"id": "…", "at": "2026-11-21T19:22:03Z", "reason": "rejected by the service: …", "resends": 0,
     "file": "stacklens-2026-11-21.log", "dev": 2049, "ino": 131, "offset": 1024, "length": 312,
     "line": "<the line as written, without its newline>"}

``line`` holds the line itself (``line_base64`` when it is not UTF-8), so a dead letter outlives the log file
it came from (the SDK's files are rotated away and deleted); ``file``, ``dev``, ``ino`` and ``offset`` say
where it was, for reference only. A line longer than ``maxLineBytes`` keeps only its first 200 bytes
(``preview``, ``"whole": false``): the service refuses lines over 1 MiB whatever the shipper does, and the
shipper never holds such a line in memory. ``id`` is a hash of the line and where it was, so the same line
passed over twice (a tracker removed, the file delivered again) is one dead letter.

The file is bounded by ``maxDeadLetterBytes``. Appends and the resend's rewrite both hold an exclusive
``flock`` on it; the rewrite replaces the file by rename, so a writer that got the lock checks that the
path still names the file it locked and opens it again when not.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from shipper import faults
from shipper.files import Line, Tail

DEAD_LETTER_NAME = "deadletter.ndjson"
JOURNAL_NAME = "deadletter.journal"  # what a resend sent and was answered (shipper.resend)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def letter_id(file: str, dev: int, ino: int, offset: int, line: bytes) -> str:
    """The same line at the same place always gets the same id."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{file}\0{dev}\0{ino}\0{offset}\0".encode())
    h.update(line)
    return h.hexdigest()


@dataclass(frozen=True)
class DeadLetter:
    id: str
    at: str
    reason: str
    file: str
    dev: int
    ino: int
    offset: int
    length: int
    line: bytes | None  # the whole line without its newline; None when only ``preview`` was kept
    preview: bytes = b""
    resends: int = 0  # how many resends the service answered by refusing the line again

    @classmethod
    def of(cls, tail: Tail, item: Line) -> DeadLetter:
        line = item.kept.removesuffix(b"\n") if item.whole else None
        return cls(
            id=letter_id(tail.path.name, tail.dev, tail.ino, item.start, item.kept if line is None else line),
            at=now_iso(),
            reason=item.problem,
            file=tail.path.name,
            dev=tail.dev,
            ino=tail.ino,
            offset=item.start,
            length=item.end - item.start,
            line=line,
            preview=b"" if item.whole else item.kept,
        )

    def to_json(self) -> bytes:
        record: dict[str, object] = {
            "id": self.id,
            "at": self.at,
            "reason": self.reason,
            "resends": self.resends,
            "file": self.file,
            "dev": self.dev,
            "ino": self.ino,
            "offset": self.offset,
            "length": self.length,
        }
        if self.line is None:
            record["whole"] = False
            record["preview"] = self.preview.decode("utf-8", "backslashreplace")
        else:
            try:
                record["line"] = self.line.decode("utf-8")
            except UnicodeDecodeError:
                record["line_base64"] = base64.b64encode(self.line).decode("ascii")
        # ensure_ascii=False: a line of non-Latin text stays its own size instead of growing up to 6x.
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, raw: bytes) -> DeadLetter:
        """One record; ValueError when it is not one (a torn write, an edit by hand)."""
        record = json.loads(raw)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        line: bytes | None = None
        if isinstance(record.get("line"), str):
            line = record["line"].encode("utf-8")
        elif isinstance(record.get("line_base64"), str):
            line = base64.b64decode(record["line_base64"], validate=True)
        preview = str(record.get("preview", "")).encode("utf-8", "backslashreplace")
        file, dev, ino, offset = (
            str(record.get("file", "")),
            int(record.get("dev", 0)),
            int(record.get("ino", 0)),
            int(record.get("offset", 0)),
        )
        ident = record.get("id")
        if not isinstance(ident, str) or not ident:
            # A record written before lines were kept whole has no id: derive one from where it was.
            ident = letter_id(file, dev, ino, offset, line if line is not None else preview)
        return cls(
            id=ident,
            at=str(record.get("at", "")),
            reason=str(record.get("reason", "")),
            file=file,
            dev=dev,
            ino=ino,
            offset=offset,
            length=int(record.get("length", 0)),
            line=line,
            preview=preview,
            resends=int(record.get("resends", 0)),
        )


@dataclass
class Appended:
    kept: int = 0
    not_kept: int = 0
    newly_full: bool = False  # this append found the file full for the first time since it last had room


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class DeadLetterFile:
    """``deadletter.ndjson`` in the log directory, at most ``max_bytes`` long."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.path = directory / DEAD_LETTER_NAME
        self.max_bytes = max_bytes
        self._full_at: int | None = None  # the file's size when it was found full

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        """The current file, open for reading and appending, under an exclusive lock."""
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                mine = os.fstat(fd)
                try:
                    current = os.stat(self.path)
                except FileNotFoundError:
                    current = None
                if current is not None and (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
                    yield fd
                    return
            finally:
                os.close(fd)  # closing the descriptor releases the lock

    def append(self, letters: list[DeadLetter]) -> Appended:
        """Append ``letters`` in order while they fit; once one does not, the file is full and nothing more
        is kept until it shrinks (a resend removed lines, or the operator moved it away)."""
        result = Appended()
        if not letters:
            return result
        with self._locked() as fd:
            size = os.fstat(fd).st_size
            if self._full_at is not None and size < self._full_at:
                self._full_at = None  # it shrank: room again, and the next fill is reported again
            # A record torn by a crash mid-write has no newline: start on a line of our own.
            out = [b"\n"] if size and os.pread(fd, 1, size - 1) != b"\n" else []
            total = size + len(out)
            for letter in letters:
                record = letter.to_json() + b"\n"
                if self._full_at is None and total + len(record) <= self.max_bytes:
                    out.append(record)
                    total += len(record)
                    result.kept += 1
                    continue
                if self._full_at is None:
                    self._full_at = total
                    result.newly_full = True
                result.not_kept += 1
            if result.kept:
                _write_all(fd, b"".join(out))
                os.fsync(fd)
        return result

    def records(self) -> Iterator[tuple[bytes, DeadLetter | None]]:
        """Each complete record as read, with the letter it holds (None when it cannot be read). A record
        still being appended (no newline yet) is left for next time."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed by the `with` below
        except FileNotFoundError:
            return
        with fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    return
                if not raw.strip():
                    continue
                try:
                    yield raw, DeadLetter.from_json(raw)
                except (ValueError, TypeError):
                    yield raw, None

    def rewrite(self, fate: Callable[[DeadLetter], DeadLetter | None]) -> int:
        """Replace the file atomically with each letter as ``fate`` decides (None: removed); records that
        cannot be read are kept as they are. Returns the number of records left."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        left = 0
        with self._locked() as fd:  # appends wait meanwhile, so none is lost to the rename
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                with os.fdopen(os.dup(fd), "rb") as fh:
                    fh.seek(0)
                    for raw in fh:
                        if not raw.strip():
                            continue
                        try:
                            letter: DeadLetter | None = DeadLetter.from_json(raw)
                        except (ValueError, TypeError):
                            letter = None
                        if letter is None:
                            _write_all(out, raw if raw.endswith(b"\n") else raw + b"\n")
                            left += 1
                            continue
                        after = fate(letter)
                        if after is None:
                            continue
                        _write_all(out, raw if after == letter else after.to_json() + b"\n")
                        left += 1
                os.fsync(out)
            finally:
                os.close(out)
            faults.hit("mid_dead_letter_rewrite")
            os.replace(tmp, self.path)
            _fsync_dir(self.path.parent)
        return left

    def figures(self) -> tuple[int, int]:
        """(records, bytes) of the file as it is; (0, 0) when there is none."""
        try:
            with open(self.path, "rb") as fh:
                lines = size = 0
                while chunk := fh.read(1024 * 1024):
                    lines += chunk.count(b"\n")
                    size += len(chunk)
                return lines, size
        except FileNotFoundError:
            return 0, 0
