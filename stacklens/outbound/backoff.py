"""When to call the outside again (docs/architecture.md §8): exponential backoff with jitter, and what a
``Retry-After``
header asks. The one schedule of the outbox (:mod:`stacklens.alerts.outbox`) and of in-call retries
(:meth:`stacklens.outbound.client.OutboundClient.post`)."""

from __future__ import annotations

import random
import time
from email.utils import parsedate_to_datetime

BACKOFF_BASE_S = 30.0  # first retry after ~30 s, then 1, 2, 4 … minutes
BACKOFF_CAP_S = 3600.0  # at most an hour between attempts: a 24 h retry period has ≥ 24 attempts
RETRY_AFTER_CAP_S = 6 * 3600.0  # a Retry-After beyond this is treated as this (a broken header)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date); ``None`` if absent."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - (now if now is not None else time.time())
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def backoff_delay(
    attempt: int, retry_after_s: float | None = None, rng: random.Random | None = None
) -> float:
    """Seconds before attempt ``attempt + 1``: exponential from 30 s, capped at an hour, with jitter.

    Jitter draws from [50 %, 100 %] of the exponential step ("equal jitter"), so receivers recovering from an
    outage are not hit by every sender at once, yet a retry never comes sooner than half the step. A
    ``Retry-After`` answer is honoured: the delay is never shorter than what the receiver asked for.
    """
    step = min(BACKOFF_BASE_S * 2.0 ** max(attempt - 1, 0), BACKOFF_CAP_S)
    delay = step * (0.5 + 0.5 * (rng.random() if rng is not None else random.random()))
    return max(delay, retry_after_s) if retry_after_s is not None else delay
