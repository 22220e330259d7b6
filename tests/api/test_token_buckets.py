from __future__ import annotations

import time
import uuid

import pytest

from api.bucket_stores import HISTORY_MINUTES, MemoryBuckets, RedisBuckets
from api.errors import ApiError
from api.token_buckets import RateLimiter, SpikeRule, get_rate_limiter
from stacklens.settings import Settings


@pytest.fixture(params=["memory", "redis"])
def make_limiter(request: pytest.FixtureRequest):
    """Factory of limiters sharing one backend: two calls = two workers of one installation."""
    namespace = f"test:{uuid.uuid4().hex}"
    if request.param == "memory":
        buckets = MemoryBuckets()
        return lambda: RateLimiter(buckets, namespace)
    url = request.getfixturevalue("redis_url")
    return lambda: RateLimiter(RedisBuckets(url), namespace)


def _refusal(call) -> ApiError:
    with pytest.raises(ApiError) as caught:
        call()
    return caught.value


def test_request_bucket_refuses_with_retry_after(make_limiter) -> None:
    limiter = make_limiter()
    for _ in range(5):
        limiter.check_request(7, 5)
    error = _refusal(lambda: limiter.check_request(7, 5))
    assert (error.status, error.error) == (429, "Rate Limited")
    assert error.headers["Retry-After"] == "1"
    limiter.check_request(8, 5)  # another key has its own bucket
    time.sleep(0.25)
    limiter.check_request(7, 5)  # refilled at 5 per second


def test_event_quota_is_shared_by_workers(make_limiter) -> None:
    one, two = make_limiter(), make_limiter()
    one.take_events(1, 70, 120)
    two.take_events(1, 50, 120)
    error = _refusal(lambda: one.take_events(1, 30, 120))
    assert error.status == 429
    assert 10 <= int(error.headers["Retry-After"]) <= 16  # 30 events at 2 per second, less what is left
    assert two.usage(1, 120)["events_available"] < 1
    one.take_events(2, 120, 120)  # other organization: untouched


def test_batch_larger_than_the_quota_passes_on_a_full_bucket(make_limiter) -> None:
    limiter = make_limiter()
    limiter.take_events(3, 500, 60)  # a full bucket lets one oversized batch through, leaving a debt
    error = _refusal(lambda: limiter.take_events(3, 1, 60))
    assert int(error.headers["Retry-After"]) > 60


def test_raising_the_quota_applies_at_once(make_limiter) -> None:
    limiter = make_limiter()
    limiter.take_events(4, 100, 100)
    _refusal(lambda: limiter.take_events(4, 50, 100))
    limiter.take_events(4, 50, 1000)


def test_limiter_choice_follows_settings(settings: Settings, redis_url: str) -> None:
    assert get_rate_limiter(settings).backend == "memory"
    assert get_rate_limiter(settings) is get_rate_limiter(settings)
    shared = settings.model_copy(update={"redis_url": redis_url})
    assert get_rate_limiter(shared).backend == "redis"


def test_items_are_taken_all_or_nothing(make_limiter) -> None:
    from collections import Counter

    from stacklens.control.project_quotas import ProjectQuota
    from stacklens.errors import RateLimited

    limiter = make_limiter()
    quotas = {1: ProjectQuota(1, 10, {"error": 4}), 2: ProjectQuota(2, None, {})}
    limiter.take_items(9, 100, Counter({(1, "error"): 4, (1, "transaction"): 5}), quotas)
    with pytest.raises(RateLimited) as caught:
        limiter.take_items(9, 100, Counter({(1, "error"): 1}), quotas)
    assert (caught.value.categories, caught.value.scope, caught.value.reason) == (
        ("error",),
        "project",
        "category_quota",
    )
    with pytest.raises(RateLimited) as caught:
        limiter.take_items(9, 100, Counter({(1, "transaction"): 2}), quotas)
    assert (caught.value.categories, caught.value.reason) == ((), "project_quota")
    # Refused requests gave their tokens back: the organization's bucket holds 100 - 9 (of the one accepted).
    assert 90 <= limiter.usage(9, 100)["events_available"] < 92
    limiter.take_items(9, 100, Counter({(2, "error"): 80}), quotas)  # another project: only the org's quota
    with pytest.raises(RateLimited) as caught:
        limiter.take_items(9, 100, Counter({(2, "error"): 20}), quotas)
    assert (caught.value.scope, caught.value.reason) == ("organization", "org_quota")


def test_checking_items_refuses_as_taking_them_would_and_spends_nothing(make_limiter) -> None:
    from collections import Counter

    from stacklens.control.project_quotas import ProjectQuota
    from stacklens.errors import RateLimited

    limiter = make_limiter()
    quotas = {1: ProjectQuota(1, None, {"transaction": 50})}
    spike = SpikeRule(10.0, 30)
    limiter.check_items(9, 100, Counter({(1, "transaction"): 30}), quotas, spike)
    limiter.check_items(9, 100, Counter({(1, "transaction"): 30}), quotas, spike)  # nothing was spent
    limiter.take_items(9, 100, Counter({(1, "transaction"): 5}), quotas, spike)  # 25 left of 30
    limiter.check_items(9, 100, Counter({(1, "transaction"): 25}), quotas, spike)
    with pytest.raises(RateLimited) as caught:
        limiter.check_items(9, 100, Counter({(1, "transaction"): 27}), quotas, spike)
    assert (caught.value.scope, caught.value.reason) == ("project", "spike_protection")
    assert caught.value.retry_after >= 1
    with pytest.raises(RateLimited) as caught:
        limiter.take_items(9, 100, Counter({(1, "transaction"): 27}), quotas, spike)  # the take agrees
    assert caught.value.reason == "spike_protection"
    limiter.check_items(8, 20, Counter({(2, "error"): 40}), {}, None)  # larger than the bucket: it is full
    limiter.take_items(8, 20, Counter({(2, "error"): 5}), {}, None)
    with pytest.raises(RateLimited) as caught:
        limiter.check_items(8, 20, Counter({(2, "error"): 16}), {}, None)
    assert caught.value.reason == "org_quota"


def test_a_spend_is_given_back_whole_buckets_and_trailing_hour(make_limiter) -> None:
    """A request the front door refuses after its quotas gives back what it took (stacklens.outcomes.managed):
    every bucket, and the minute spike protection reads, in memory and in Redis."""
    from collections import Counter

    from stacklens.control.project_quotas import ProjectQuota
    from stacklens.errors import RateLimited

    limiter = make_limiter()
    quotas = {1: ProjectQuota(1, 10, {"error": 4})}
    spike = SpikeRule(10.0, 30)
    give_back = limiter.take_items(9, 100, Counter({(1, "error"): 4}), quotas, spike)
    assert give_back is not None
    with pytest.raises(RateLimited):
        limiter.take_items(9, 100, Counter({(1, "error"): 1}), quotas, spike)  # the category's 4 are spent
    history = f"{limiter.namespace}:hist:1"  # project 1's accepted items per minute
    now = int(time.time() // 60)
    minutes = range(now - HISTORY_MINUTES, now + 2)
    assert limiter.buckets.recent(history, minutes) == 4
    give_back()
    assert limiter.buckets.recent(history, minutes) == 0, "spike protection's hour forgets them"
    assert limiter.usage(9, 100)["events_available"] > 99.9
    # The category's and the project's buckets are whole again: the same request is taken once more.
    assert limiter.take_items(9, 100, Counter({(1, "error"): 4}), quotas, spike) is not None
    assert limiter.take_items(9, 100, Counter(), quotas, spike) is None, "nothing spent, nothing to give back"
