"""The budgets every agent call runs under (docs/agents.md, "Budgets").

- ``agent_calls_per_minute``: calls of one token (or API key) per minute;
- ``agent_concurrency``: calls of one organization running at once;
- ``explore_concurrency`` and ``query_time`` / ``query_memory``: Explore's own per-organization slots and
  engine limits (:mod:`stacklens.explore.run`), which an Explore tool runs under as the page's questions do.

Over a budget, a call answers at once with :class:`OverBudget`, which names the budget, its limit and when
to retry: an agent waits, never the ingest path, which shares none of these. The counts live in a
:class:`BudgetBook` of the serving app (one per control store, whose token ids they are keyed by).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from stacklens.errors import StackLensError

CALLS_PER_MINUTE = 120
CONCURRENT_PER_ORG = 4


class OverBudget(StackLensError):
    """A call over one of the budgets; ``budget`` names it."""

    def __init__(self, budget: str, limit: float, retry_after_s: float, detail: str) -> None:
        super().__init__(detail)
        self.budget = budget
        self.limit = limit
        self.retry_after_s = retry_after_s

    def as_dict(self) -> dict[str, object]:
        return {
            "error": "over_budget",
            "budget": self.budget,
            "limit": self.limit,
            "retry_after_s": round(self.retry_after_s, 1),
            "detail": str(self),
        }


@dataclass
class Budgets:
    calls_per_minute: int = CALLS_PER_MINUTE
    concurrent_per_org: int = CONCURRENT_PER_ORG


class BudgetBook:
    """The calls of the last minute per caller and the calls running per organization."""

    def __init__(self, budgets: Budgets | None = None) -> None:
        self.budgets = budgets or Budgets()
        self._lock = threading.Lock()
        self._recent: dict[str, deque[float]] = {}
        self._running: dict[int, int] = {}

    def _spend_rate(self, caller: str, now: float) -> None:
        most = self.budgets.calls_per_minute
        window = self._recent.setdefault(caller, deque())
        while window and window[0] <= now - 60:
            window.popleft()
        if len(window) >= most:
            raise OverBudget(
                "agent_calls_per_minute",
                most,
                60 - (now - window[0]),
                f"over the budget agent_calls_per_minute: at most {most} calls a minute per token",
            )
        window.append(now)

    @contextmanager
    def within(self, caller: str, org_id: int) -> Iterator[None]:
        """Run one call of ``caller`` (a token's key) in ``org_id`` under the rate and concurrency budgets."""
        most = self.budgets.concurrent_per_org
        with self._lock:
            if self._running.get(org_id, 0) >= most:
                raise OverBudget(
                    "agent_concurrency",
                    most,
                    1.0,
                    f"over the budget agent_concurrency: at most {most} agent calls of an organization at once",
                )
            self._spend_rate(caller, time.monotonic())
            self._running[org_id] = self._running.get(org_id, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._running[org_id] -= 1
