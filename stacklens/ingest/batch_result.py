"""What landing one request's batch answers: its figures, and the answer of a batch sent again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stacklens.errors import Conflict
from stacklens.ingest.writer import BatchRecord

MAX_REJECTED_REPORTED = 1000  # the answer lists at most this many line errors (the count stays exact)


class IdempotencyKeyReused(Conflict):
    """The Idempotency-Key of a landed batch came again with another body."""


@dataclass
class BatchResult:
    batch_id: str
    accepted: int = 0
    duplicates: int = 0
    skipped: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)
    replayed: bool = False
    events_by_app_key: dict[int, int] = field(default_factory=dict)

    def answer(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "rejected": self.rejected[:MAX_REJECTED_REPORTED],
        }

    def record(self, lines: int, body_hash: str) -> BatchRecord:
        """The figures kept in `ingest_batches`, which a resend of the batch is answered with."""
        return BatchRecord(
            self.batch_id,
            lines,
            self.accepted,
            self.duplicates,
            self.skipped,
            self.rejected[:MAX_REJECTED_REPORTED],
            body_hash,
        )


def replayed(landed: BatchRecord, body_hash: str) -> BatchResult:
    """The first answer of a batch sent again; a different body under the same key is refused (409)."""
    if landed.body_hash and body_hash and landed.body_hash != body_hash:
        raise IdempotencyKeyReused(
            f'the Idempotency-Key "{landed.batch_id}" was already used for a batch with a different body; '
            "a resend must repeat the body exactly, and a new batch needs a new key",
        )
    return BatchResult(
        landed.batch_id, landed.accepted, landed.duplicates, landed.skipped, landed.rejected, True
    )
