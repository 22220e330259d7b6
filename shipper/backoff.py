"""How long the shipper waits before sending a batch again."""

from __future__ import annotations

import random

from shipper.config import Config


def backoff_delay(config: Config, attempt: int, retry_after: float | None) -> float:
    """Exponential backoff with full jitter (many shippers never retry in step); Retry-After, when given,
    is a floor."""
    cap = min(config.retry_backoff_max, config.retry_backoff * 2 ** (attempt - 1))
    delay = random.uniform(0, cap)
    return max(delay, retry_after) if retry_after is not None else delay
