"""Sign-in throttle: free attempts, then doubling delays per account and per client; Redis shares locks; one
throttle per installation, shared by its requests, never by another installation."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from stacklens.settings import Settings
from stacklens.signin_throttle import (
    CLIENT_FACTOR,
    MemoryFailures,
    RedisFailures,
    SignInThrottle,
    get_throttle,
)
from tests.conftest import make_settings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_delays_double_after_the_free_attempts_and_success_resets() -> None:
    clock = Clock()
    throttle = SignInThrottle(MemoryFailures(clock), "t", free=3, base=1.0, ceiling=8.0)
    assert [throttle.failed("a@x.test", "1.1.1.1") for _ in range(2)] == [None, None]
    waits = []
    for _ in range(5):
        refusal = throttle.failed("a@x.test", "1.1.1.1")
        assert refusal is not None and refusal.scope == "account"
        assert throttle.check("a@x.test", "1.1.1.1") is not None  # locked: even the right password waits
        waits.append(refusal.retry_after)
        clock.now += refusal.retry_after
        assert throttle.check("a@x.test", "1.1.1.1") is None
    assert waits == [1, 2, 4, 8, 8]  # doubling, capped by the ceiling
    throttle.succeeded("a@x.test")
    assert throttle.failed("a@x.test", "1.1.1.1") is None  # the account's count starts again


def test_one_client_spraying_many_accounts_is_locked() -> None:
    throttle = SignInThrottle(MemoryFailures(Clock()), "t", free=2, base=5.0)
    refusals = [throttle.failed(f"user{i}@x.test", "6.6.6.6") for i in range(2 * CLIENT_FACTOR)]
    assert refusals[: 2 * CLIENT_FACTOR - 1] == [None] * (2 * CLIENT_FACTOR - 1)
    assert refusals[-1] is not None and refusals[-1].scope == "client"
    refusal = throttle.check("someone-else@x.test", "6.6.6.6")
    assert refusal is not None and refusal.retry_after == 5
    assert throttle.check("someone-else@x.test", "7.7.7.7") is None  # another client is not affected


@pytest.mark.redis
def test_redis_locks_are_shared_between_workers(redis_url: str) -> None:
    namespace = f"test:{uuid.uuid4().hex}"
    one = SignInThrottle(RedisFailures(redis_url), namespace, free=2, base=2.0)
    two = SignInThrottle(RedisFailures(redis_url), namespace, free=2, base=2.0)
    assert one.failed("a@x.test", "1.1.1.1") is None
    refusal = two.failed("a@x.test", "1.1.1.1")  # the second worker sees the first's failure
    assert refusal is not None and refusal.retry_after == 2
    seen = one.check("a@x.test", "9.9.9.9")
    assert seen is not None and seen.scope == "account" and 1 <= seen.retry_after <= 2
    two.succeeded("a@x.test")
    assert one.check("a@x.test", "9.9.9.9") is None


def test_one_throttle_per_installation(tmp_path: Path, warehouse_url: str) -> None:
    first = make_settings(tmp_path / "a", warehouse_url, login_throttle_after=3)
    again = first.model_copy()
    other = make_settings(tmp_path / "b", warehouse_url, login_throttle_after=3)
    throttle = get_throttle(first)
    assert get_throttle(again) is throttle
    assert get_throttle(other) is not throttle and get_throttle(other).namespace != throttle.namespace
    assert isinstance(throttle.store, MemoryFailures) and throttle.free == 3


def test_redis_holds_the_counts_when_configured(settings: Settings, redis_url: str) -> None:
    throttle = get_throttle(settings.model_copy(update={"redis_url": redis_url}))
    assert isinstance(throttle.store, RedisFailures)
    assert throttle is not get_throttle(settings)
