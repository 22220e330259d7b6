"""Firing and resolution of anomaly rules (docs/alerts.md): a firing resolves after two buckets in a row back
inside the band, not one; gaps neither fire nor resolve; the direction picks the side."""

from __future__ import annotations

import numpy as np

from stacklens.anomalies.decide import outside, replay

NAN = np.nan


def _run(scores: list[float], direction: str = "up", counts: float = 50.0) -> tuple[list[int], list[bool]]:
    score = np.array([scores])
    got = replay(score, np.full(score.shape, counts), 5.0, direction, 10)
    return [int(i) for i in np.flatnonzero(got.starts[0])], [bool(v) for v in got.firing[0]]


def test_one_bucket_back_inside_does_not_resolve_two_do() -> None:
    starts, firing = _run([0, 8, 1, 9, 1, 1, 0, 7])
    assert starts == [1, 7]  # one firing through the dip at 2, a new one at 7
    assert firing == [False, True, True, True, True, False, False, True]


def test_gaps_neither_fire_nor_resolve() -> None:
    starts, firing = _run([0, 8, NAN, NAN, 1, NAN, 1, 0])
    assert starts == [1] and firing == [False, True, True, True, True, True, False, False]


def test_the_direction_and_the_minimum_count() -> None:
    assert _run([0, -8, 0, 0], "up")[0] == []
    assert _run([0, -8, 0, 0], "down")[0] == [1]
    assert _run([0, -8, 8, 0, 0], "both")[0] == [1]  # still firing at 2: the other side is outside too
    assert _run([0, 8, 0], "up", counts=5)[0] == []  # fewer than min_count: never fires
    assert outside(np.array([NAN, 6.0, -6.0]), 5.0, "both").tolist() == [False, True, True]


def test_an_excused_bucket_never_fires_and_a_firing_carries_in() -> None:
    score = np.array([[0.0, 9.0, 0.0]])
    excused = np.array([[False, True, False]])
    assert not replay(score, np.full((1, 3), 50.0), 5.0, "up", 10, excused).starts.any()
    carried = replay(np.array([[1.0, 1.0]]), np.full((1, 2), 50.0), 5.0, "up", 10, None, np.array([True]))
    assert carried.firing[0].tolist() == [True, False] and not carried.starts.any()
