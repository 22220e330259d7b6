"""The budgets every agent call runs under (docs/agents.md, "Budgets").

- ``agent_calls_per_minute``: calls of one token (or API key) per minute;
- ``agent_concurrency``: calls of one organization running at once;
- ``agent_explore_share``: the share of the wall clock the agents' Explore questions may hold, all
  organizations of the server together (:class:`LaneShare`);
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from stacklens.errors import StackLensError

CALLS_PER_MINUTE = 120
CONCURRENT_PER_ORG = 4
# The agents' Explore questions hold at most a quarter of the wall clock, in seconds of the questions' own
# duration, with a few seconds in hand. The concurrency budgets alone did not bound their CPU: an agent
# answered sooner asks sooner, and ten agents asking the heaviest question in a loop kept the analysts'
# lane, its engine thread and the MCP handling around it busy all the time, on the two cores the front door
# needed (bench/agents.py: ingest fell by three quarters). An agent over the share is told when to retry;
# a question answered within the burst (a person's agent asking a few) never meets it.
EXPLORE_SHARE = 0.25
EXPLORE_BURST_S = 3.0


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
    explore_share: float = EXPLORE_SHARE


class LaneShare:
    """A share of the wall clock for a kind of call (a token bucket of seconds): each call may start while
    the bucket holds time, and its duration is taken out when it ends; the bucket fills at ``share`` seconds
    a second, up to ``burst_s``. One long call can take the bucket below zero: the next waits for it to fill
    again, so over any long stretch the calls hold at most ``share`` of it. ``clock`` is for tests."""

    def __init__(
        self, share: float, burst_s: float = EXPLORE_BURST_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.share = share
        self.burst_s = burst_s
        self._clock = clock
        self._lock = threading.Lock()
        self._seconds = burst_s
        self._at = clock()

    def _fill(self, now: float) -> None:
        self._seconds = min(self.burst_s, self._seconds + (now - self._at) * self.share)
        self._at = now

    @contextmanager
    def held(self, budget: str) -> Iterator[None]:
        """Run one call within the share; over it, :class:`OverBudget` naming ``budget`` at once."""
        with self._lock:
            now = self._clock()
            self._fill(now)
            if self._seconds <= 0:
                wait = -self._seconds / self.share
                raise OverBudget(
                    budget,
                    self.share,
                    wait,
                    f"over the budget {budget}: agents' questions hold at most {self.share:.0%} of the"
                    f" server's time; retry in {wait:.1f} s",
                )
        started = self._clock()
        try:
            yield
        finally:
            with self._lock:
                now = self._clock()
                self._fill(now)
                self._seconds -= now - started


class BudgetBook:
    """The calls of the last minute per caller and the calls running per organization."""

    def __init__(self, budgets: Budgets | None = None) -> None:
        self.budgets = budgets or Budgets()
        self._lock = threading.Lock()
        self._recent: dict[str, deque[float]] = {}
        self._running: dict[int, int] = {}
        self.explore = LaneShare(self.budgets.explore_share, EXPLORE_BURST_S)

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
