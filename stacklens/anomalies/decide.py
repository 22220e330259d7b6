"""When an anomaly rule fires and resolves, bucket by bucket, for many series at once (docs/alerts.md).

A bucket is *outside* when its score is beyond the sensitivity's ``k`` in the rule's direction (above the
band for ``up``, below for ``down``, either for ``both``). It **fires** when it is outside, its count is at
least ``min_count`` and it is not excused (a new issue's first hour: the new-issue rule owns it). A firing
series **resolves** after :data:`RESOLVE_BUCKETS` buckets in a row inside the same band — one bucket back
inside does not end it, so a firing does not flap. A gap or a learning bucket neither fires nor resolves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from stacklens.anomalies.model import Array

RESOLVE_BUCKETS = 2
DIRECTIONS = ("up", "down", "both")


@dataclass(frozen=True)
class Replay:
    """Per series and bucket: whether it was firing, and the buckets where a firing started."""

    firing: NDArray[np.bool_]
    starts: NDArray[np.bool_]


def outside(score: Array, k: float, direction: str) -> NDArray[np.bool_]:
    """Buckets beyond the band on the rule's side (NaN scores are inside: nothing to judge)."""
    with np.errstate(invalid="ignore"):
        if direction == "up":
            return np.asarray(score > k)
        if direction == "down":
            return np.asarray(score < -k)
        return np.asarray(np.abs(score) > k)


def replay(
    score: Array,
    counts: Array,
    k: float,
    direction: str,
    min_count: float,
    excused: NDArray[np.bool_] | None = None,
    firing_before: NDArray[np.bool_] | None = None,
    inside_before: NDArray[np.int64] | None = None,
) -> Replay:
    """Step every series through its buckets (shape ``(series, buckets)``); ``firing_before`` and
    ``inside_before`` carry a live rule's state in (its firing and its run of buckets inside)."""
    rows, buckets = score.shape
    out_mask = outside(score, k, direction)
    with np.errstate(invalid="ignore"):
        can_fire = out_mask & (np.nan_to_num(counts, nan=0.0) >= min_count)
    if excused is not None:
        can_fire &= ~excused
    judged = ~np.isnan(score)
    firing = np.zeros(rows, dtype=bool) if firing_before is None else firing_before.copy()
    inside_run = np.zeros(rows, dtype=np.int64) if inside_before is None else inside_before.copy()
    was = np.zeros((rows, buckets), dtype=bool)
    starts = np.zeros((rows, buckets), dtype=bool)
    for t in range(buckets):
        start = ~firing & can_fire[:, t]
        back = firing & judged[:, t] & ~out_mask[:, t]
        inside_run = np.where(back, inside_run + 1, np.where(firing & out_mask[:, t], 0, inside_run))
        resolved = firing & (inside_run >= RESOLVE_BUCKETS)
        firing = (firing & ~resolved) | start
        inside_run = np.where(resolved | start, 0, inside_run)
        starts[:, t] = start
        was[:, t] = firing
    return Replay(was, starts)
