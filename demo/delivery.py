"""How the demo's traffic reaches the shop: requests the shop did not take are sent again, and what it took
is counted per kind and day, so nothing of the history is lost without a word.

Why a request fails at all: the shop's bugs are real (an unhandled exception answers 500), and after such an
answer the shop's server closes that keep-alive connection. The client's next request on it then meets a
reset (``ReadError``) without the shop having read it; a backfill that gave up there would lose the rest of a
day's page loads. A request that failed
before the shop answered is sent again here (at once on a fresh connection, then with a growing wait while
the shop is busy or briefly away), as are answers that say "later" (429, 502, 503, 504, honouring
``Retry-After``). A read timeout is not repeated: the shop may have done the work, and a second visit would
count twice.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import httpx

# Failures where the request never reached the shop's handler: safe to send again.
RESENDABLE = (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ConnectTimeout, httpx.PoolTimeout)
LATER = frozenset({429, 502, 503, 504})
ATTEMPTS = 6
# Waits before attempts 2..6: the first at once (a reset after a 500 needs only a new connection), then
# 0.5, 1, 2, 4 s with jitter: 7.5 s in all for a shop that is busy or briefly away; one that is gone is
# given up on by the caller (demo.backfill.GIVE_UP_AFTER) and the loss is said.
FIRST_WAIT_S = 0.5
MAX_WAIT_S = 8.0


class RetryingTransport(httpx.BaseTransport):
    """An ``httpx`` transport that sends a request again when the shop did not take it (see the module)."""

    def __init__(
        self,
        inner: httpx.BaseTransport | None = None,
        attempts: int = ATTEMPTS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._inner = inner or httpx.HTTPTransport()
        self._attempts = attempts
        self._sleep = sleep
        self._jitter = random.Random()
        self.resent = 0  # requests sent more than once, for the driver's log

    def _wait(self, attempt: int, retry_after: str | None = None) -> None:
        if retry_after and retry_after.strip().isdigit():
            self._sleep(min(MAX_WAIT_S, float(retry_after)))
        elif attempt > 1:
            base = min(MAX_WAIT_S, FIRST_WAIT_S * 2 ** (attempt - 2))
            self._sleep(base * self._jitter.uniform(0.8, 1.2))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        for attempt in range(1, self._attempts + 1):
            last = attempt == self._attempts
            try:
                response = self._inner.handle_request(request)
            except RESENDABLE:
                if last:
                    raise
                self.resent += 1
                self._wait(attempt)
                continue
            if response.status_code not in LATER or last:
                return response
            retry_after = response.headers.get("retry-after")
            response.close()
            self.resent += 1
            self._wait(attempt + 1, retry_after)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def close(self) -> None:
        self._inner.close()


# What the traffic sends, by kind; the summary lists them in this order.
VISITS = "visits"
PAGE_LOADS = "page loads"
JS_ERRORS = "JavaScript errors"
REPLAYS = "replays"
REQUESTS = "shop requests"
ERROR_ANSWERS = "shop error answers"  # of the requests: answered 4xx/5xx (most are the shop's error events)
MAILS = "order mails"
MAIL_ERRORS = "mail errors"  # captured by the worker's SDK
# Release-health sessions: one per browser page load (@sentry/browser), and one per request the shop answered
# (its sentry-python SDK tracks each request as a session: request mode, sent as aggregates).
BROWSER_SESSIONS = "browser sessions"
SERVER_SESSIONS = "server sessions"
KINDS = (
    VISITS,
    REQUESTS,
    ERROR_ANSWERS,
    PAGE_LOADS,
    JS_ERRORS,
    REPLAYS,
    MAILS,
    MAIL_ERRORS,
    BROWSER_SESSIONS,
    SERVER_SESSIONS,
)


@dataclass
class Tally:
    """What landed (the shop answered; its tunnel accepted) and what was lost, per day and kind. Thread-safe:
    the backfill's days run side by side."""

    landed: Counter[tuple[date, str]] = field(default_factory=Counter)
    lost: Counter[tuple[date, str]] = field(default_factory=Counter)
    reasons: dict[date, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, day: date, kind: str, n: int = 1) -> None:
        with self._lock:
            self.landed[(day, kind)] += n

    def lose(self, day: date, kind: str, reason: str, n: int = 1) -> None:
        with self._lock:
            self.lost[(day, kind)] += n
            self.reasons.setdefault(day, reason)

    def record(self, day: date, kind: str, refusal: str) -> None:
        """One item: landed when ``refusal`` is empty, else lost for that reason."""
        if refusal:
            self.lose(day, kind, refusal)
        else:
            self.add(day, kind)

    def totals(self) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for (_, kind), n in self.landed.items():
            out[kind] = out.get(kind, 0) + n
        return out

    def per_day(self, kind: str, days: list[date]) -> dict[date, int]:
        return {d: self.landed.get((d, kind), 0) for d in days}

    def lost_days(self) -> dict[date, dict[str, int]]:
        out: dict[date, dict[str, int]] = {}
        for (day, kind), n in sorted(self.lost.items()):
            out.setdefault(day, {})[kind] = n
        return out


def describe(error: Exception) -> str:
    """A one-line reason for the log: the exception's class and message."""
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
