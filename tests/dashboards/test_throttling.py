"""One sign-in throttle per installation: shared by its requests, never by another installation."""

from __future__ import annotations

from pathlib import Path

from dashboards.throttling import get_throttle
from stacklens.settings import Settings
from stacklens.throttle import MemoryFailures, RedisFailures
from tests.conftest import make_settings


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
