"""The schedule of calls to the outside again (stacklens/outbound/backoff.py): backoff grows with jitter
and is capped."""

from __future__ import annotations

import random

from stacklens.outbound.backoff import BACKOFF_CAP_S, backoff_delay, parse_retry_after


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(n, rng=rng) for n in range(1, 12)]
    assert 15 <= delays[0] <= 30 and 30 <= delays[1] <= 60
    assert all(d <= BACKOFF_CAP_S for d in delays) and delays[-1] >= BACKOFF_CAP_S / 2
    assert len({round(backoff_delay(3), 6) for _ in range(20)}) > 1  # jitter
    assert backoff_delay(1, retry_after_s=600) == 600
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 - 60) == 60
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
