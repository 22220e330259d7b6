"""The bucket stores on their own, in memory and in a real Redis: what a take spends and refuses, what a
peek reads, the per-minute counts spike protection sums, and a Redis that cannot be reached."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
import redis

from api.bucket_stores import HISTORY_MINUTES, Buckets, MemoryBuckets, RedisBuckets, required_tokens
from api.errors import ApiError


@pytest.fixture(params=["memory", "redis"])
def buckets(request: pytest.FixtureRequest) -> Buckets:
    if request.param == "memory":
        return MemoryBuckets()
    return RedisBuckets(request.getfixturevalue("redis_url"))


@pytest.fixture
def key() -> str:
    return f"test:{uuid.uuid4().hex}"


def test_a_take_spends_until_empty_then_refuses_with_the_wait(buckets: Buckets, key: str) -> None:
    first = buckets.take(key, 10, 1, 6)
    assert first.allowed and first.retry_after == 0
    assert 4 <= first.available < 4.5
    refused = buckets.take(key, 10, 1, 6)
    assert not refused.allowed
    assert 1.4 <= refused.retry_after <= 2  # 6 needed, about 4 left, at 1 a second
    assert 4 <= refused.available < 5, "a refusal spends nothing"
    assert buckets.take(f"{key}:other", 10, 1, 10).allowed, "another key has its own bucket"


def test_a_bucket_refills_at_its_rate_up_to_its_capacity(buckets: Buckets, key: str) -> None:
    # At 20 tokens a second the 4 taken come back one every 50 ms, and a loaded machine's two round trips can
    # take that long: what the peek finds is at most what the time since the take refilled. A take and peek
    # slower than 150 ms prove nothing about the spend, so they are made again (on a bucket of their own).
    for attempt in range(5):
        bucket = f"{key}:{attempt}"
        started = time.monotonic()
        buckets.take(bucket, 4, 20, 4)
        level = buckets.peek(bucket, 4, 20)
        elapsed = time.monotonic() - started
        if elapsed < 0.15:
            break
    assert elapsed < 0.15, "no take and peek within 150 ms in five attempts"
    assert level <= 20 * elapsed + 1e-6, (level, elapsed)
    key = bucket
    time.sleep(0.15)
    assert 2.5 <= buckets.peek(key, 4, 20) <= 4  # about 3 tokens at 20 a second
    time.sleep(0.25)
    assert buckets.peek(key, 4, 20) == 4, "never more than the capacity"


def test_a_peek_spends_nothing(buckets: Buckets, key: str) -> None:
    assert buckets.peek(key, 5, 0.01) == 5, "a bucket never used is full"
    for _ in range(3):
        assert buckets.peek(key, 5, 0.01) == 5
    assert buckets.take(key, 5, 0.01, 5).allowed


def test_an_oversized_take_passes_on_a_full_bucket_leaving_a_debt(buckets: Buckets, key: str) -> None:
    assert required_tokens(60, 500) == 60 and required_tokens(60, 7) == 7
    taken = buckets.take(key, 60, 1, 500)
    assert taken.allowed
    assert taken.available <= -439
    refused = buckets.take(key, 60, 1, 1)
    assert not refused.allowed and refused.retry_after > 439


def test_a_raised_capacity_applies_at_once_and_a_negative_take_gives_back(buckets: Buckets, key: str) -> None:
    buckets.take(key, 100, 0.01, 100)
    assert not buckets.take(key, 100, 0.01, 50).allowed
    assert buckets.take(key, 1000, 0.01, 50).allowed, "the 900 added are there at once"
    left = buckets.peek(key, 1000, 0.01)
    buckets.take(key, 1000, 0.01, -50)
    assert buckets.peek(key, 1000, 0.01) == pytest.approx(left + 50, abs=0.5)


def test_per_minute_counts_are_summed_over_the_minutes_asked(buckets: Buckets, key: str) -> None:
    minute = int(time.time() // 60)
    buckets.add_recent(key, minute - 2, 5)
    buckets.add_recent(key, minute - 1, 7)
    buckets.add_recent(key, minute - 1, 3)
    buckets.add_recent(f"{key}:other", minute - 1, 100)
    assert buckets.recent(key, range(minute - HISTORY_MINUTES, minute)) == 15
    assert buckets.recent(key, range(minute - 1, minute)) == 10
    buckets.add_recent(key, minute - 1, -10)  # a spend given back
    assert buckets.recent(key, range(minute - HISTORY_MINUTES, minute)) == 5
    assert buckets.recent(f"{key}:never", range(minute - HISTORY_MINUTES, minute)) == 0


def test_memory_forgets_minutes_older_than_the_hour(key: str) -> None:
    buckets = MemoryBuckets()
    buckets.add_recent(key, 1000, 4)
    buckets.add_recent(key, 1000 + HISTORY_MINUTES + 1, 1)
    assert buckets.recent(key, range(990, 1100)) == 5, "still within the hour and a minute"
    buckets.add_recent(key, 1000 + HISTORY_MINUTES + 2, 1)
    assert buckets.recent(key, range(990, 1100)) == 2


def test_redis_counts_and_buckets_expire(redis_url: str, key: str) -> None:
    buckets = RedisBuckets(redis_url)
    buckets.add_recent(key, 1000, 4)
    buckets.take(f"{key}:bucket", 60, 1, 1)
    client = redis.Redis.from_url(redis_url)
    assert 0 < client.ttl(f"{key}:1000") <= (HISTORY_MINUTES + 2) * 60
    assert 0 < client.ttl(f"{key}:bucket") <= 60 * 2 + 60, "twice the refill time, and a minute"


def test_unreachable_redis_is_503_for_every_call(key: str) -> None:
    buckets = RedisBuckets("redis://127.0.0.1:9/0")
    calls: list[Callable[[], object]] = [
        lambda: buckets.take(key, 5, 5, 1),
        lambda: buckets.peek(key, 5, 5),
        lambda: buckets.add_recent(key, 1000, 1),
        lambda: buckets.recent(key, range(990, 1000)),
    ]
    for call in calls:
        with pytest.raises(ApiError) as caught:
            call()
        assert (caught.value.status, caught.value.error) == (503, "Service Unavailable")
        assert "the rate-limit store (Redis) is unreachable" in caught.value.detail
