"""A batch: consecutive lines of one file generation, identified by its byte range and bytes."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shipper.files import Line, Tail
from stacklens_contract.words import APPLICATION_NOT_FOUND

log = logging.getLogger(__name__)


@dataclass
class Batch:
    tail: Tail
    items: list[Line]
    opened_at: float = field(default_factory=time.monotonic)
    nbytes: int = 0  # the bytes of the lines to send
    held: int = 0  # the bytes in memory: lines to send and passed-over lines kept for the dead letters

    @property
    def start(self) -> int:
        return self.items[0].start

    @property
    def end(self) -> int:
        return self.items[-1].end

    @property
    def lines(self) -> list[bytes]:
        return [item.data for item in self.items if item.data is not None]

    def add(self, items: list[Line]) -> None:
        self.items.extend(items)
        self.nbytes += sum(item.end - item.start for item in items if item.data is not None)
        self.held += sum(len(item.data if item.data is not None else item.kept) for item in items)

    def body(self) -> bytes:
        return b"".join(self.lines)

    def batch_id(self, body: bytes) -> str:
        """Deterministic: the same file generation, byte range and bytes always give the same id."""
        h = hashlib.blake2b(digest_size=16)
        ident = f"{self.tail.path.name}\0{self.tail.dev}\0{self.tail.ino}\0{self.start}\0{self.end}\0"
        h.update(ident.encode())
        h.update(body)
        return h.hexdigest()

    def own_app_keys(self) -> set[str | None]:
        """The ``app_key`` each line carries (``None`` for a line that relies on the configured appKey)."""
        keys: set[str | None] = set()
        for line in self.lines:
            try:
                value = json.loads(line).get("app_key")
            except (ValueError, AttributeError):
                value = None
            keys.add(value if isinstance(value, str) and value else None)
        return keys

    def pass_over(self, reason: str) -> None:
        """Turn every line into a dead letter with ``reason`` (acknowledging the batch then moves past it)."""
        for item in self.items:
            item.refuse(reason)

    def refuse_lines(self, rejected: Any) -> list[str]:
        """Turn the lines a 2xx answer lists under ``rejected`` (``[{"line": n, "error": "…"}]``, ``n``
        counted from 1 in the body) into dead letters with the service's reason; return the reasons."""
        if not isinstance(rejected, list):
            return []
        sent = [item for item in self.items if item.data is not None]
        reasons: list[str] = []
        for entry in rejected:
            if not isinstance(entry, dict):
                continue
            number, error = entry.get("line"), str(entry.get("error") or "no reason given")
            if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(sent):
                item = sent[number - 1]
                if item.data is not None:
                    item.refuse(f"rejected by the service: {error}")
                    reasons.append(error)
        return reasons

    def split(self) -> tuple[Batch, Batch]:
        """Two halves by line (each keeps its own byte range, so its own Idempotency-Key)."""
        middle = len(self.items) // 2
        first, second = Batch(self.tail, []), Batch(self.tail, [])
        first.add(self.items[:middle])
        second.add(self.items[middle:])
        return first, second


def pass_over_rejected(batch: Batch, answer: dict[str, Any], dead_path: Path) -> None:
    """Lines the service refused inside an accepted batch go to the dead letters with its reason.

    The answer numbers lines from 1 in the body, which holds the batch's lines in order, one each. Lines
    whose app key the service no longer knows (a key rotation) are also logged with the spec's
    ``Application Not Found``.
    """
    refused = batch.refuse_lines(answer.get("rejected"))
    unknown_key = [reason for reason in refused if reason.startswith(APPLICATION_NOT_FOUND)]
    if unknown_key:
        log.error(
            "Application Not Found: %d events carry an app key the service no longer knows (%s); "
            "passed over to %s",
            len(unknown_key),
            unknown_key[0].removeprefix("Application Not Found: "),
            dead_path,
        )


def split_refused(queue: deque[Batch], batch: Batch, reason: str) -> None:
    """A batch refused whole (too large, a conflict): sent again as two halves at the head of ``queue``, or,
    down to one line, kept in the dead letters so it never stalls the file."""
    queue.popleft()
    if len(batch.items) == 1 or len(batch.lines) <= 1:
        # One line the service will not take whole: keep it in the dead letters, never stall the file.
        for item in batch.items:
            item.refuse(f"refused by the service: {reason}")
        queue.appendleft(batch)
        return
    first, second = batch.split()
    log.warning("batch of %d events refused as too large (%s); splitting it", len(batch.lines), reason)
    queue.appendleft(second)
    queue.appendleft(first)
