"""A request's outcomes resolved exactly once: accepted, refused (its quota given back), forgotten (a replay),
or — dropped unresolved, as when a request is cancelled between its admission and the door — counted
``internal`` by the last resort, its quota given back; counted in the real warehouse, with a real limiter."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections import Counter
from datetime import UTC, datetime

from api.bucket_stores import MemoryBuckets
from api.landing import landed
from api.token_buckets import RateLimiter
from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.service import Admitted, Attribution, admit_batch
from stacklens.outcomes import tally
from stacklens.outcomes.counting import INTERNAL, QUEUE_FULL, Outcomes
from stacklens.outcomes.managed import GiveBack, ManagedOutcomes, settled_later
from stacklens.outcomes.reads import OutcomeQuery, outcome_rows
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.stacklens.ingest.front_door_seed import APP_KEY, ORG, PROJECT, error_line


def _counted(settings: Settings, org_id: int) -> dict[tuple[int, str, str, str], int]:
    assert settled_later()
    rows = outcome_rows(settings, get_warehouse(settings), org_id, OutcomeQuery(), {}, datetime.now(UTC))
    found: Counter[tuple[int, str, str, str]] = Counter()
    for row in rows:
        found[(row.project_id, row.category, row.outcome, row.reason)] += row.quantity
    return dict(found)


PREPARED: Outcomes = Counter(
    {
        (3, "error", "accepted", ""): 2,
        (3, "error", "invalid", "unreadable"): 1,
        (3, "client_report", "accepted", ""): 1,
    }
)


def test_each_resolution_counts_once_and_a_refusal_gives_the_quota_back(settings: Settings) -> None:
    apply_migrations(settings)
    given: list[int] = []
    accepted = ManagedOutcomes(settings, 41, PREPARED)
    accepted.accept()
    accepted.accept()  # a second resolution counts nothing
    accepted.refuse("invalid", QUEUE_FULL)
    assert _counted(settings, 41) == {
        (3, "error", "accepted", ""): 2,
        (3, "error", "invalid", "unreadable"): 1,
        (3, "client_report", "accepted", ""): 1,
    }
    refused = ManagedOutcomes(
        settings, 42, PREPARED, Counter({(3, "attachment", "filtered", "not_stored"): 1})
    )
    refused.give_back = lambda: given.append(1)
    refused.refuse("invalid", QUEUE_FULL)
    refused.accept()
    assert _counted(settings, 42) == {
        (3, "error", "invalid", QUEUE_FULL): 2,  # would have landed: refused
        (3, "attachment", "invalid", QUEUE_FULL): 1,  # follows the envelope
        (3, "error", "invalid", "unreadable"): 1,  # settled at admission
        (3, "client_report", "accepted", ""): 1,  # the SDK's report stands
    }
    assert given == [1], "the quota given back once"
    forgotten = ManagedOutcomes(settings, 43, PREPARED)
    forgotten.forget()
    del forgotten
    gc.collect()
    assert _counted(settings, 43) == {}


def test_a_request_dropped_before_the_door_counts_internal_and_gives_its_quota_back(
    settings: Settings,
) -> None:
    """The admission ran (its quota spent) and the request's task was cancelled before it reached the door:
    nobody resolves it, and the last resort does."""
    apply_migrations(settings)
    limiter = RateLimiter(MemoryBuckets(), "managed-test")

    def take(counts: Counter[tuple[int, str]]) -> GiveBack | None:
        return limiter.take_items(ORG, 10, counts, {})

    def admit() -> Admitted:
        admitted = admit_batch(
            settings,
            ORG,
            error_line() + b"\n" + error_line(),
            header_app_key=APP_KEY,
            idempotency_key=None,
            resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
            take_events=take,
        )
        assert isinstance(admitted, Admitted)
        return admitted

    dropped = admit()
    assert limiter.usage(ORG, 10)["events_available"] < 8.1
    del dropped
    gc.collect()

    async def cancelled() -> None:  # a task cancelled before its first step: it never submits
        task = asyncio.ensure_future(landed(admit()))
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    gc.collect()
    assert _counted(settings, ORG) == {(PROJECT, "error", "invalid", INTERNAL): 4}
    assert limiter.usage(ORG, 10)["events_available"] > 9.9, "both spends given back"
    landed_one = admit()

    async def answered() -> None:
        result = await landed(landed_one)
        assert result.accepted == 2

    asyncio.run(answered())
    assert settle_front_doors()
    assert _counted(settings, ORG) == {
        (PROJECT, "error", "invalid", INTERNAL): 4,
        (PROJECT, "error", "accepted", ""): 2,
    }
    tally.flush_all()
