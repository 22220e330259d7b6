"""Log files on disk: discovery, identity and reading complete lines.

A file's identity is its device and inode plus a hash of its first bytes (``head``) and a hash of the
bytes just before the saved offset (``tail``). Device + inode alone is not enough: inodes are reused
after a delete, and a file truncated and rewritten keeps its inode. The head hash catches a different
file on a reused inode; the tail hash catches a rewrite that kept the first bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from shipper.tracker import TrackerEntry

LOG_NAME_RE = re.compile(r"^stacklens-(\d{4}-\d{2}-\d{2})\.log$")
HEAD_BYTES = 4096
TAIL_BYTES = 4096
READ_CHUNK = 1024 * 1024
PREVIEW_BYTES = 200  # what the dead letters keep of a line too long to keep whole


def list_log_files(directory: Path) -> list[Path]:
    """``stacklens-YYYY-MM-DD.log`` files in date order (the oldest is finished first)."""
    names = [entry.name for entry in os.scandir(directory) if LOG_NAME_RE.match(entry.name)]
    return [directory / name for name in sorted(names)]


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def pread_all(fd: int, length: int, offset: int) -> bytes:
    """Up to ``length`` bytes at ``offset`` (fewer only at end of file)."""
    parts: list[bytes] = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        parts.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


@dataclass
class Line:
    start: int
    end: int
    data: bytes | None  # None: passed over (too long or not a JSON object); see ``problem``
    problem: str = ""
    kept: bytes = b""  # a passed-over line's bytes, for the dead letters (only its start when not ``whole``)
    whole: bool = True

    def refuse(self, reason: str) -> None:
        """Pass this line over with ``reason``: its bytes go to the dead letters whole."""
        if self.data is not None:
            self.problem, self.kept, self.data = reason, self.data, None


@dataclass
class Tail:
    """One generation of one log file being read: an open descriptor and its offsets.

    ``committed`` is the end of the last byte range the service acknowledged; ``read_pos`` is how far lines
    have been handed to batches (never past a newline).
    """

    path: Path
    fd: int
    dev: int
    ino: int
    gen: str = field(default_factory=lambda: uuid.uuid4().hex)
    head_len: int = 0
    head_hash: str = ""
    committed: int = 0
    read_pos: int = 0
    buffer: bytes = b""  # bytes read from read_pos on, not yet handed out
    skipped: int = 0  # > 0 while passing over an over-long line that starts at read_pos
    preview: bytes = b""
    pos_hash: str = ""  # tail hash at read_pos, to notice a rewrite under us
    retired: bool = False  # truncated, replaced or deleted: deliver what was read, then drop
    frozen: bool = False  # retired by truncation: its old bytes are gone, read no further

    @classmethod
    def open(cls, path: Path) -> Tail:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        st = os.fstat(fd)
        tail = cls(path=path, fd=fd, dev=st.st_dev, ino=st.st_ino)
        tail.refresh_head()
        return tail

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def refresh_head(self) -> bool:
        """Check the stored head still matches and extend it up to HEAD_BYTES; False when it changed."""
        if self.head_len and digest(pread_all(self.fd, self.head_len, 0)) != self.head_hash:
            return False
        if self.head_len < HEAD_BYTES:
            data = pread_all(self.fd, HEAD_BYTES, 0)
            if len(data) > self.head_len:
                self.head_len, self.head_hash = len(data), digest(data)
        return True

    def tail_hash(self, offset: int) -> str:
        start = max(0, offset - TAIL_BYTES)
        return digest(pread_all(self.fd, offset - start, start))

    def matches(self, entry: TrackerEntry) -> bool:
        """Whether a tracker entry describes this file: same inode, same head, same bytes before its
        offset."""
        if entry.get("dev") != self.dev or entry.get("ino") != self.ino:
            return False
        offset = int(entry.get("offset", 0))
        head_len = int(entry.get("head_len", 0))
        if self.size() < offset:
            return False  # truncated while the shipper was stopped
        if head_len and digest(pread_all(self.fd, head_len, 0)) != entry.get("head_hash"):
            return False
        return self.tail_hash(offset) == entry.get("tail_hash")

    def changed_under_us(self) -> bool:
        """Truncated or rewritten while we read it (same inode)."""
        if self.size() < self.read_pos:
            return True
        if not self.refresh_head():
            return True
        return bool(self.read_pos) and self.tail_hash(self.read_pos) != self.pos_hash

    def has_data(self) -> bool:
        """Whether a read could return something: a buffered newline or bytes not read yet."""
        return b"\n" in self.buffer or self.size() > self.read_pos + len(self.buffer) + self.skipped

    def read_lines(self, max_lines: int, max_bytes: int, max_line: int) -> list[Line]:
        """Complete lines from ``read_pos``: at most ``max_lines`` lines and about ``max_bytes`` bytes.

        A line longer than ``max_line`` is passed over without being held in memory; a line without its
        newline yet stays unread until the newline arrives (a line is only sent once it is complete).
        """
        out: list[Line] = []
        taken = 0
        buf, pos = self.buffer, 0
        while len(out) < max_lines and taken < max_bytes:
            if self.skipped:
                chunk = os.pread(self.fd, READ_CHUNK, self.read_pos + self.skipped)
                if not chunk:
                    break
                newline = chunk.find(b"\n")
                if newline < 0:
                    self.skipped += len(chunk)
                    continue
                end = self.read_pos + self.skipped + newline + 1
                out.append(
                    Line(self.read_pos, end, None, f"line longer than {max_line} bytes", self.preview, False)
                )
                self.read_pos, self.skipped, self.preview = end, 0, b""
                buf, pos = b"", 0
                continue
            newline = buf.find(b"\n", pos)
            if newline >= 0:
                end = newline + 1
                out.append(check_line(self.read_pos, self.read_pos + end - pos, buf[pos:end], max_line))
                taken += end - pos
                self.read_pos += end - pos
                pos = end
                continue
            rest = buf[pos:]
            if len(rest) > max_line:
                # Over-long and unfinished: remember where it started and stop holding its bytes.
                self.skipped, self.preview = len(rest), rest[:PREVIEW_BYTES]
                buf, pos = b"", 0
                continue
            chunk = os.pread(self.fd, READ_CHUNK, self.read_pos + len(rest))
            if not chunk:
                break
            buf, pos = rest + chunk, 0
        self.buffer = buf[pos:]
        self.pos_hash = self.tail_hash(self.read_pos) if self.read_pos else ""
        return out

    def rewind(self, offset: int) -> None:
        """Read again from ``offset`` (a line boundary)."""
        self.read_pos, self.buffer, self.skipped, self.preview = offset, b"", 0, b""
        self.pos_hash = self.tail_hash(offset) if offset else ""


def check_line(start: int, end: int, data: bytes, max_line: int) -> Line:
    if len(data) > max_line:
        # Only its start is kept: the service refuses lines over its own 1 MiB limit whatever the shipper
        # does, and a copy would let one line fill the dead letters.
        return Line(start, end, None, f"line longer than {max_line} bytes", data[:PREVIEW_BYTES], False)
    body = data.rstrip(b"\r\n")
    if not body.strip():
        return Line(start, end, None, "")  # blank line: nothing to deliver, nothing to report
    try:
        # A byte order mark (a file written by a Windows tool) is no part of the line; the service drops it.
        text = body.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return Line(start, end, None, "not valid UTF-8", data)
    try:
        value = json.loads(text)
    except ValueError:
        return Line(start, end, None, "not valid JSON", data)
    if not isinstance(value, dict):
        return Line(start, end, None, "not a JSON object", data)
    return Line(start, end, data)
