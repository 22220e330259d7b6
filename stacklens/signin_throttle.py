"""Sign-in throttling: per account and per client, with delays that double after a few free failures.

After ``free`` failed attempts for one account (``4 × free`` for one client address, as a NAT or an office
shares an address), each further failure locks that account (or client) for ``base × 2^(n − free)``
seconds, up to ``ceiling``. While locked every attempt is refused, the right password too, so 200 guesses in
40 s become at most about a dozen before the delays reach minutes. A successful sign-in clears the
account's count. Failure counts expire an hour (or two ceilings) after the last failure.

Counts and locks live in this process's memory, or in Redis when one is configured so every worker sees
the same locks. Locks are Redis keys with a time to live, so no clocks need to agree. :func:`get_throttle`
gives the throttle of an installation (what the dashboards' sign-in uses).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from stacklens.settings import Settings

CLIENT_FACTOR = 4


class FailureStore(Protocol):
    def locked_for(self, key: str) -> float: ...

    def add_failure(self, key: str, window: float) -> int: ...

    def lock(self, key: str, seconds: float) -> None: ...

    def reset(self, key: str) -> None: ...


class MemoryFailures:
    """Counts and locks in this process (one `stacklens serve` process serves everything)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, float]] = {}
        self._locks: dict[str, float] = {}

    def locked_for(self, key: str) -> float:
        with self._lock:
            return max(0.0, self._locks.get(key, 0.0) - self._clock())

    def add_failure(self, key: str, window: float) -> int:
        with self._lock:
            now = self._clock()
            count, expires = self._counts.get(key, (0, now))
            count = count + 1 if expires > now else 1
            self._counts[key] = (count, now + window)
            if len(self._counts) > 100_000:  # a spray of addresses must not grow memory without end
                self._counts = {k: v for k, v in self._counts.items() if v[1] > now}
            return count

    def lock(self, key: str, seconds: float) -> None:
        with self._lock:
            self._locks[key] = self._clock() + seconds
            if len(self._locks) > 100_000:
                now = self._clock()
                self._locks = {k: v for k, v in self._locks.items() if v > now}

    def reset(self, key: str) -> None:
        with self._lock:
            self._counts.pop(key, None)
            self._locks.pop(key, None)


class RedisFailures:
    """Counts and locks in Redis, shared by every worker."""

    def __init__(self, url: str) -> None:
        import redis

        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)

    def locked_for(self, key: str) -> float:
        ttl = self._client.pttl(f"{key}:lock")
        return max(0.0, ttl / 1000) if isinstance(ttl, int) and ttl > 0 else 0.0

    def add_failure(self, key: str, window: float) -> int:
        pipe = self._client.pipeline(transaction=True)
        pipe.incr(f"{key}:fails")
        pipe.expire(f"{key}:fails", math.ceil(window))
        count, _ = pipe.execute()
        return int(count)

    def lock(self, key: str, seconds: float) -> None:
        self._client.set(f"{key}:lock", b"1", px=max(1, math.ceil(seconds * 1000)))

    def reset(self, key: str) -> None:
        self._client.delete(f"{key}:fails", f"{key}:lock")


@dataclass(frozen=True)
class Refusal:
    """A locked account or client: wait ``retry_after`` seconds; ``scope`` says which lock."""

    retry_after: int
    scope: str  # "account" | "client"


class SignInThrottle:
    def __init__(
        self, store: FailureStore, namespace: str, *, free: int = 5, base: float = 1.0, ceiling: float = 900.0
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.free = free
        self.base = base
        self.ceiling = ceiling

    def _keys(self, email: str, client: str) -> tuple[str, str]:
        # Hashed: Redis never holds e-mail addresses.
        account = hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]
        return f"{self.namespace}:acct:{account}", f"{self.namespace}:client:{client or '-'}"

    def delay(self, failures: int, free: int) -> float:
        if failures < free:
            return 0.0
        return min(self.ceiling, self.base * 2.0 ** min(failures - free, 40))

    def check(self, email: str, client: str) -> Refusal | None:
        """A refusal while the account or the client is locked, else ``None`` (go ahead and verify)."""
        account, peer = self._keys(email, client)
        for key, scope in ((account, "account"), (peer, "client")):
            wait = self.store.locked_for(key)
            if wait > 0:
                return Refusal(max(1, math.ceil(wait)), scope)
        return None

    def failed(self, email: str, client: str) -> Refusal | None:
        """Count a failed attempt; the lock it starts, if any."""
        account, peer = self._keys(email, client)
        window = max(3600.0, 2 * self.ceiling)
        worst: Refusal | None = None
        for key, scope, free in (
            (account, "account", self.free),
            (peer, "client", self.free * CLIENT_FACTOR),
        ):
            wait = self.delay(self.store.add_failure(key, window), free)
            if wait > 0:
                self.store.lock(key, wait)
                if worst is None or wait > worst.retry_after:
                    worst = Refusal(max(1, math.ceil(wait)), scope)
        return worst

    def succeeded(self, email: str) -> None:
        self.store.reset(self._keys(email, "")[0])


# The sign-in throttle of each installation: in memory, or in Redis when ``STACKLENS_REDIS_URL`` is set.
_lock = threading.Lock()
_throttles: dict[tuple[str, str, int, float, float], SignInThrottle] = {}


def get_throttle(settings: Settings) -> SignInThrottle:
    """One throttle per installation (keyed by its control store, like the API's rate limiter), so two
    installations or two tests sharing a process or a Redis never share counts."""
    installation = hashlib.sha256(settings.resolved_database_url.encode()).hexdigest()[:12]
    key = (
        settings.redis_url or "",
        installation,
        settings.login_throttle_after,
        settings.login_throttle_base_seconds,
        settings.login_throttle_max_seconds,
    )
    with _lock:
        throttle = _throttles.get(key)
        if throttle is None:
            store: FailureStore = (
                RedisFailures(settings.redis_url) if settings.redis_url else MemoryFailures()
            )
            throttle = SignInThrottle(
                store,
                f"stacklens:signin:{installation}",
                free=settings.login_throttle_after,
                base=settings.login_throttle_base_seconds,
                ceiling=settings.login_throttle_max_seconds,
            )
            _throttles[key] = throttle
        return throttle
