"""Token-bucket rate limits: per key requests/second and per organization events/minute.

In-process buckets by default (one process serves everything); with ``STACKLENS_REDIS_URL`` the buckets
live in Redis and are updated by one Lua script, so N workers share one budget and two workers can never
both spend the last token. A bucket holds at most one period's worth (burst = the quota) and refills
continuously. Raising a quota adds the difference at once, so ``stacklens admin set-quota`` takes effect on
the next request.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from api.errors import RATE_LIMITED, SERVICE_UNAVAILABLE, ApiError
from stacklens.settings import Settings


@dataclass(frozen=True)
class Take:
    allowed: bool
    available: float  # tokens left after the attempt
    retry_after: float  # seconds until the attempt would succeed (0 when allowed)


class Buckets(Protocol):
    def take(self, key: str, capacity: float, per_second: float, n: float) -> Take: ...

    def peek(self, key: str, capacity: float, per_second: float) -> float: ...


def _required(capacity: float, n: float) -> float:
    # A batch larger than the whole bucket may go through when the bucket is full, leaving a debt, rather
    # than never fitting at all.
    return min(n, capacity)


class MemoryBuckets:
    """Buckets in this process's memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, tuple[float, float, float]] = {}  # key -> (tokens, capacity, monotonic time)

    def _refill(self, key: str, capacity: float, per_second: float, now: float) -> float:
        tokens, old_capacity, then = self._state.get(key, (capacity, capacity, now))
        tokens += max(0.0, capacity - old_capacity)  # a raised quota applies at once
        return min(capacity, tokens + (now - then) * per_second)

    def take(self, key: str, capacity: float, per_second: float, n: float) -> Take:
        with self._lock:
            now = time.monotonic()
            tokens = self._refill(key, capacity, per_second, now)
            need = _required(capacity, n)
            if tokens >= need:
                tokens -= n
                self._state[key] = (tokens, capacity, now)
                return Take(True, tokens, 0.0)
            self._state[key] = (tokens, capacity, now)
            return Take(False, tokens, (need - tokens) / per_second)

    def peek(self, key: str, capacity: float, per_second: float) -> float:
        with self._lock:
            return self._refill(key, capacity, per_second, time.monotonic())


# KEYS[1] bucket; ARGV capacity, per_second, n (n = 0 only reads). Returns {allowed, tokens, retry_after}
# as strings (Lua numbers would be truncated to integers on the way out). Redis's clock is the one clock
# all workers share.
_TAKE_SCRIPT = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'capacity', 'ts')
local tokens = tonumber(state[1]) or capacity
local old_capacity = tonumber(state[2]) or capacity
local ts = tonumber(state[3]) or now
if capacity > old_capacity then tokens = tokens + capacity - old_capacity end
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate)
local need = math.min(n, capacity)
local allowed = 0
local retry = 0
if n == 0 then
  return {'1', tostring(tokens), '0'}
end
if tokens >= need then
  tokens = tokens - n
  allowed = 1
else
  retry = (need - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'capacity', tostring(capacity), 'ts', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate * 2) + 60)
return {tostring(allowed), tostring(tokens), tostring(retry)}
"""


class RedisBuckets:
    """Buckets in Redis, shared by every worker."""

    def __init__(self, url: str) -> None:
        import redis

        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._script = self._client.register_script(_TAKE_SCRIPT)

    def _run(self, key: str, capacity: float, per_second: float, n: float) -> list[float]:
        import redis

        try:
            result = self._script(keys=[key], args=[capacity, per_second, n])
        except redis.RedisError as exc:
            # Refuse rather than run unlimited; 503 tells the shipper to retry later.
            raise ApiError(
                503, SERVICE_UNAVAILABLE, f"the rate-limit store (Redis) is unreachable: {exc}"
            ) from exc
        return [float(value) for value in result]

    def ping(self) -> None:
        self._client.ping()

    def take(self, key: str, capacity: float, per_second: float, n: float) -> Take:
        allowed, tokens, retry = self._run(key, capacity, per_second, n)
        return Take(bool(allowed), tokens, retry)

    def peek(self, key: str, capacity: float, per_second: float) -> float:
        return self._run(key, capacity, per_second, 0)[1]


class RateLimiter:
    """The two limits of the API, over memory or Redis buckets."""

    def __init__(self, buckets: Buckets, namespace: str) -> None:
        self.buckets = buckets
        self.namespace = namespace
        self.backend = "redis" if isinstance(buckets, RedisBuckets) else "memory"

    def _request_key(self, key_id: int) -> str:
        return f"{self.namespace}:req:{key_id}"

    def _events_key(self, org_id: int) -> str:
        return f"{self.namespace}:evt:{org_id}"

    @staticmethod
    def _refuse(what: str, retry_after: float) -> ApiError:
        seconds = max(1, math.ceil(retry_after))
        return ApiError(429, RATE_LIMITED, f"{what}; retry in {seconds} s", {"Retry-After": str(seconds)})

    def check_request(self, key_id: int, per_second: int) -> None:
        """Spend one request of the key's per-second budget, or raise 429 ``Rate Limited``."""
        result = self.buckets.take(self._request_key(key_id), per_second, per_second, 1)
        if not result.allowed:
            raise self._refuse(
                f"more than {per_second} requests per second with this key", result.retry_after
            )

    def take_events(self, org_id: int, n: int, per_minute: int) -> None:
        """Spend ``n`` events of the organization's per-minute quota, or raise 429 ``Rate Limited``."""
        if n <= 0:
            return
        result = self.buckets.take(self._events_key(org_id), per_minute, per_minute / 60, n)
        if not result.allowed:
            raise self._refuse(
                f"the organization's quota of {per_minute} events per minute is spent", result.retry_after
            )

    def usage(self, org_id: int, per_minute: int | None = None) -> dict[str, Any]:
        """What is left of the organization's event quota right now."""
        capacity = per_minute or 0
        available = self.buckets.peek(self._events_key(org_id), capacity, capacity / 60) if capacity else None
        return {"events_per_minute": per_minute, "events_available": available}

    def request_usage(self, key_id: int, per_second: int) -> float:
        """Requests left in the key's bucket right now."""
        return self.buckets.peek(self._request_key(key_id), per_second, per_second)


_lock = threading.Lock()
_limiters: dict[tuple[str, str], RateLimiter] = {}


def get_rate_limiter(settings: Settings) -> RateLimiter:
    """The limiter of this installation: Redis buckets when ``redis_url`` is set, else this process's memory.

    Limiters are keyed by the control store too, so two installations (or two tests) sharing a process or a
    Redis never share buckets: organization ids are only unique within one control store.
    """
    installation = hashlib.sha256(settings.resolved_database_url.encode()).hexdigest()[:12]
    key = (settings.redis_url or "", installation)
    with _lock:
        limiter = _limiters.get(key)
        if limiter is None:
            buckets: Buckets = RedisBuckets(settings.redis_url) if settings.redis_url else MemoryBuckets()
            limiter = RateLimiter(buckets, f"stacklens:rl:{installation}")
            _limiters[key] = limiter
        return limiter
