"""Token-bucket rate limits: per key requests/second, per organization events/minute, and inside it per
project events/minute, per project and data category, and spike protection (docs/decisions.md).

The buckets live in this process's memory by default, in Redis with ``STACKLENS_REDIS_URL`` so N workers
share one budget (api/bucket_stores.py). A bucket holds at most one period's worth (burst = the quota) and
refills continuously. Raising a quota adds the difference at once, so ``stacklens admin set-quota`` takes
effect on the next request.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from api.bucket_stores import HISTORY_MINUTES, Buckets, MemoryBuckets, RedisBuckets, required_tokens
from api.errors import RATE_LIMITED, ApiError
from stacklens.control.project_quotas import ProjectQuota
from stacklens.errors import RateLimited
from stacklens.outcomes.counting import CATEGORY_QUOTA, ORG_QUOTA, PROJECT_QUOTA, SPIKE_PROTECTION
from stacklens.settings import Settings


def _minute(now: float | None = None) -> int:
    return int((time.time() if now is None else now) // 60)


@dataclass(frozen=True)
class SpikeRule:
    """Spike protection: a project is held to ``multiple`` times its trailing hour's accepted items per
    minute, never below ``floor_per_minute`` (a quiet or new project can still send a burst)."""

    multiple: float = 10.0
    floor_per_minute: int = 10_000

    def limit(self, trailing_hour: int) -> int:
        return max(self.floor_per_minute, math.ceil(self.multiple * trailing_hour / HISTORY_MINUTES))

    @classmethod
    def of(cls, settings: Settings) -> SpikeRule:
        return cls(settings.spike_multiple, settings.spike_floor_per_minute)


@dataclass(frozen=True)
class _Limit:
    """One bucket a request spends from, and what its refusal says."""

    key: str
    per_minute: int
    n: int
    what: str
    categories: tuple[str, ...]
    scope: str
    reason: str


class RateLimiter:
    """The limits of the API, over memory or Redis buckets."""

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

    def _history_key(self, project_id: int) -> str:
        return f"{self.namespace}:hist:{project_id}"

    def _limits(
        self,
        org_id: int,
        org_per_minute: int,
        counts: Mapping[tuple[int, str], int],
        per_project: Mapping[int, int],
        quotas: Mapping[int, ProjectQuota],
        spike: SpikeRule | None,
        minute: int,
    ) -> list[_Limit]:
        """Every bucket ``counts`` spend from, in the order they are taken."""
        total = sum(per_project.values())
        limits: list[_Limit] = []
        for (project_id, category), n in sorted(counts.items()):
            per_minute = quotas[project_id].categories.get(category) if project_id in quotas else None
            if per_minute and n > 0:
                key = f"{self.namespace}:cat:{project_id}:{category}"
                what = f"the project's quota of {per_minute} {category} items per minute is spent"
                limits.append(_Limit(key, per_minute, n, what, (category,), "project", CATEGORY_QUOTA))
        for project_id, n in sorted(per_project.items()):
            own = quotas[project_id].events_per_minute if project_id in quotas else None
            if own and n > 0:
                what = f"the project's quota of {own} events per minute is spent"
                limits.append(
                    _Limit(f"{self.namespace}:prj:{project_id}", own, n, what, (), "project", PROJECT_QUOTA)
                )
            if spike is not None and project_id and n > 0:
                trailing = self.buckets.recent(
                    self._history_key(project_id), range(minute - HISTORY_MINUTES, minute)
                )
                held = spike.limit(trailing)
                what = (
                    f"spike protection: the project is held to {held} events per minute "
                    f"({spike.multiple:g} times its last hour's rate, at least {spike.floor_per_minute})"
                )
                key = f"{self.namespace}:spk:{project_id}"
                limits.append(_Limit(key, held, n, what, (), "project", SPIKE_PROTECTION))
        what = f"the organization's quota of {org_per_minute} events per minute is spent"
        limits.append(
            _Limit(self._events_key(org_id), org_per_minute, total, what, (), "organization", ORG_QUOTA)
        )
        return limits

    def check_items(
        self,
        org_id: int,
        org_per_minute: int,
        counts: Mapping[tuple[int, str], int],
        quotas: Mapping[int, ProjectQuota],
        spike: SpikeRule | None = None,
    ) -> None:
        """Raise the :class:`RateLimited` that :meth:`take_items` would raise for ``counts`` now, spending
        nothing: an entrance whose items cost much to prepare (an OTLP export's conversion, ~3 s of CPU for
        10,000 spans) refuses on a cheap count of them first. Passing guarantees nothing (the items are
        taken, or refused, once prepared)."""
        per_project: Counter[int] = Counter()
        for (project_id, _), n in counts.items():
            per_project[project_id] += n
        if sum(per_project.values()) <= 0:
            return
        for limit in self._limits(org_id, org_per_minute, counts, per_project, quotas, spike, _minute()):
            available = self.buckets.peek(limit.key, limit.per_minute, limit.per_minute / 60)
            need = required_tokens(limit.per_minute, limit.n)  # as a take judges it
            if available < need:
                seconds = (need - available) * 60 / limit.per_minute
                raise RateLimited(
                    f"{limit.what}; retry in {max(1, math.ceil(seconds))} s",
                    seconds,
                    limit.categories,
                    limit.scope,
                    limit.reason,
                )

    def take_items(
        self,
        org_id: int,
        org_per_minute: int,
        counts: Mapping[tuple[int, str], int],
        quotas: Mapping[int, ProjectQuota],
        spike: SpikeRule | None = None,
    ) -> Callable[[], None] | None:
        """Spend a request's accepted items, by (project id, category), from every limit they fall under:
        each project's per-category limits, its own events per minute, spike protection, then the
        organization's quota. All or nothing: a refusal gives back what the request took before it, and
        raises :class:`RateLimited` naming the categories, scope and reason of the limit that refused.

        Returns what gives the whole spend back (None when nothing was spent): a request the front door
        refuses after its quotas (a full queue, a spool that cannot be written) is resent, and must not pay
        twice (stacklens.outcomes.managed)."""
        per_project: Counter[int] = Counter()
        for (project_id, _), n in counts.items():
            per_project[project_id] += n
        total = sum(per_project.values())
        if total <= 0:
            return None
        minute = _minute()
        limits = self._limits(org_id, org_per_minute, counts, per_project, quotas, spike, minute)
        taken: list[_Limit] = []
        for limit in limits:
            result = self.buckets.take(limit.key, limit.per_minute, limit.per_minute / 60, limit.n)
            if not result.allowed:
                for spent in taken:  # a negative take puts the tokens back
                    self.buckets.take(spent.key, spent.per_minute, spent.per_minute / 60, -spent.n)
                seconds = max(1, math.ceil(result.retry_after))
                raise RateLimited(
                    f"{limit.what}; retry in {seconds} s",
                    seconds,
                    limit.categories,
                    limit.scope,
                    limit.reason,
                )
            taken.append(limit)
        for project_id, n in per_project.items():
            if project_id:
                self.buckets.add_recent(self._history_key(project_id), minute, n)

        def give_back() -> None:  # a negative take puts the tokens back; the trailing hour forgets them
            for spent in taken:
                self.buckets.take(spent.key, spent.per_minute, spent.per_minute / 60, -spent.n)
            for project_id, n in per_project.items():
                if project_id:
                    self.buckets.add_recent(self._history_key(project_id), minute, -n)

        return give_back

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
    installation = _installation(settings.resolved_database_url)
    key = (settings.redis_url or "", installation)
    with _lock:
        limiter = _limiters.get(key)
        if limiter is None:
            buckets: Buckets = RedisBuckets(settings.redis_url) if settings.redis_url else MemoryBuckets()
            limiter = RateLimiter(buckets, f"stacklens:rl:{installation}")
            _limiters[key] = limiter
        return limiter


@lru_cache(maxsize=64)
def _installation(database_url: str) -> str:
    """A short name of a control store (its URL's digest, computed once: every request asks)."""
    return hashlib.sha256(database_url.encode()).hexdigest()[:12]
