"""The sign-in throttle of this installation: in memory, or in Redis when ``STACKLENS_REDIS_URL`` is set."""

from __future__ import annotations

import hashlib
import threading

from stacklens.settings import Settings
from stacklens.throttle import FailureStore, MemoryFailures, RedisFailures, SignInThrottle

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
