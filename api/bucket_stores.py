"""Token-bucket stores: where the API's rate-limit buckets and the trailing hour spike protection reads live
(api/token_buckets.py spends from them).

In-process by default (one process serves everything); with ``STACKLENS_REDIS_URL`` in Redis, updated by one
Lua script, so N workers share one budget and two workers can never both spend the last token. A bucket
holds at most its capacity and refills continuously; raising the capacity adds the difference at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Protocol

from api.errors import SERVICE_UNAVAILABLE, ApiError
from stacklens.blocking import may_block

# The per-minute counts are kept this long: spike protection reads the trailing hour of a project's accepted
# items, minute by minute.
HISTORY_MINUTES = 60


@dataclass(frozen=True)
class Take:
    allowed: bool
    available: float  # tokens left after the attempt
    retry_after: float  # seconds until the attempt would succeed (0 when allowed)


class Buckets(Protocol):
    def take(self, key: str, capacity: float, per_second: float, n: float) -> Take: ...

    def peek(self, key: str, capacity: float, per_second: float) -> float: ...

    def add_recent(self, key: str, minute: int, n: int) -> None:
        """Add ``n`` to ``key``'s count of ``minute`` (minutes since the epoch), kept for an hour."""
        ...

    def recent(self, key: str, minutes: range) -> int:
        """The sum of ``key``'s counts over ``minutes``."""
        ...


def required_tokens(capacity: float, n: float) -> float:
    # A batch larger than the whole bucket may go through when the bucket is full, leaving a debt, rather
    # than never fitting at all.
    return min(n, capacity)


class MemoryBuckets:
    """Buckets in this process's memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, tuple[float, float, float]] = {}  # key -> (tokens, capacity, monotonic time)
        self._history: dict[str, dict[int, int]] = {}  # key -> minute -> count

    def _refill(self, key: str, capacity: float, per_second: float, now: float) -> float:
        tokens, old_capacity, then = self._state.get(key, (capacity, capacity, now))
        tokens += max(0.0, capacity - old_capacity)  # a raised quota applies at once
        return min(capacity, tokens + (now - then) * per_second)

    def take(self, key: str, capacity: float, per_second: float, n: float) -> Take:
        with self._lock:
            now = time.monotonic()
            tokens = self._refill(key, capacity, per_second, now)
            need = required_tokens(capacity, n)
            if tokens >= need:
                tokens -= n
                self._state[key] = (tokens, capacity, now)
                return Take(True, tokens, 0.0)
            self._state[key] = (tokens, capacity, now)
            return Take(False, tokens, (need - tokens) / per_second)

    def peek(self, key: str, capacity: float, per_second: float) -> float:
        with self._lock:
            return self._refill(key, capacity, per_second, time.monotonic())

    def add_recent(self, key: str, minute: int, n: int) -> None:
        with self._lock:
            counts = self._history.setdefault(key, {})
            counts[minute] = counts.get(minute, 0) + n
            for old in [m for m in counts if m < minute - HISTORY_MINUTES - 1]:
                del counts[old]

    def recent(self, key: str, minutes: range) -> int:
        with self._lock:
            counts = self._history.get(key, {})
            return sum(counts.get(m, 0) for m in minutes)


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


def _unreachable(exc: Exception) -> ApiError:
    # Refuse rather than run unlimited; 503 tells the shipper to retry later.
    return ApiError(503, SERVICE_UNAVAILABLE, f"the rate-limit store (Redis) is unreachable: {exc}")


class RedisBuckets:
    """Buckets in Redis, shared by every worker."""

    def __init__(self, url: str) -> None:
        import redis

        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._script = self._client.register_script(_TAKE_SCRIPT)

    def _run(self, key: str, capacity: float, per_second: float, n: float) -> list[float]:
        import redis

        may_block("Redis")  # every call here is a round trip: never on the event loop (stacklens.blocking)
        try:
            result = self._script(keys=[key], args=[capacity, per_second, n])
        except redis.RedisError as exc:
            raise _unreachable(exc) from exc
        return [float(value) for value in result]

    def ping(self) -> None:
        self._client.ping()

    def take(self, key: str, capacity: float, per_second: float, n: float) -> Take:
        allowed, tokens, retry = self._run(key, capacity, per_second, n)
        return Take(bool(allowed), tokens, retry)

    def peek(self, key: str, capacity: float, per_second: float) -> float:
        return self._run(key, capacity, per_second, 0)[1]

    def add_recent(self, key: str, minute: int, n: int) -> None:
        import redis

        may_block("Redis")
        try:
            with self._client.pipeline(transaction=False) as pipe:
                pipe.incrby(f"{key}:{minute}", n)
                pipe.expire(f"{key}:{minute}", (HISTORY_MINUTES + 2) * 60)
                pipe.execute()
        except redis.RedisError as exc:
            raise _unreachable(exc) from exc

    def recent(self, key: str, minutes: range) -> int:
        import redis

        may_block("Redis")
        try:
            values = self._client.mget([f"{key}:{m}" for m in minutes])
        except redis.RedisError as exc:
            raise _unreachable(exc) from exc
        return sum(int(v) for v in values if v is not None)
