"""``deadletter.journal``: what a resend (:mod:`shipper.resend`) sent and what the service answered, an
append-only file synced after every entry, which is also the resend's lock; and the fates it records — what
became of each dead letter, absolute, so applying them twice gives the same file."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from shipper.deadletters import DeadLetter, now_iso


class Busy(Exception):
    """Another resend holds the journal."""


class Journal:
    """``deadletter.journal``: what a resend sent and what the service answered (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def lock(self) -> None:
        """Open and lock the journal for this run; :class:`Busy` when another resend holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise Busy() from None
        self.fd = fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def entries(self) -> list[dict[str, Any]]:
        """Every complete entry; an entry torn by a crash was never acted on (each is synced before)."""
        out: list[dict[str, Any]] = []
        with os.fdopen(os.dup(self.fd), "rb") as fh:
            fh.seek(0)
            for raw in fh:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    out.append(entry)
        return out

    def append(self, entry: dict[str, Any]) -> None:
        os.write(self.fd, json.dumps(entry, separators=(",", ":")).encode() + b"\n")
        os.fsync(self.fd)

    def clear(self) -> None:
        os.ftruncate(self.fd, 0)
        os.fsync(self.fd)


@dataclass
class Fates:
    """What the service made of the lines sent, by dead-letter id. Values are absolute (the reason and the
    refusal count after the answer), so applying the same fates twice gives the same file."""

    landed: set[str] = field(default_factory=set)
    refused: dict[str, tuple[str, int]] = field(default_factory=dict)  # id -> (reason, resends)

    def apply(self, letter: DeadLetter) -> DeadLetter | None:
        if letter.id in self.landed:
            return None
        if letter.id in self.refused:
            reason, resends = self.refused[letter.id]
            if (letter.reason, letter.resends) != (reason, resends):
                return replace(letter, reason=reason, resends=resends, at=now_iso())
        return letter

    def record(self, entry: dict[str, Any]) -> None:
        self.landed.update(str(i) for i in entry.get("landed", []))
        for ident, (reason, resends) in (entry.get("refused") or {}).items():
            self.refused[str(ident)] = (str(reason), int(resends))

    def __bool__(self) -> bool:
        return bool(self.landed or self.refused)
