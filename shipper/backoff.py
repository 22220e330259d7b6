"""How long the shipper waits before sending a batch again."""

from __future__ import annotations

import random

from shipper.config import Config

RETRIES = 3  # the spec's `Retry attempt <k>/3`: a batch is sent at most four times before it is parked


def backoff_delay(config: Config, attempt: int, retry_after: float | None) -> float:
    """Exponential backoff with full jitter, so many shippers never retry in step.

    A ``Retry-After`` from the service is a floor, and the jitter comes on top of it: shippers refused
    together in a burst are all told the same Retry-After, and coming back at that same instant would
    make the next burst. With the defaults (``retryBackoff: 1s``) a ``Retry-After: 2`` on the first retry
    gives a wait between 2 and 3 seconds.
    """
    cap = min(config.retry_backoff_max, config.retry_backoff * 2 ** (attempt - 1))
    jitter = random.uniform(0, cap)
    return jitter if retry_after is None else retry_after + jitter
