"""The anomaly model on generated series with a known truth (issue #67, docs/alerts.md "Anomaly rules"):
four weeks of hourly Poisson counts with a weekly shape (weekends at 40 % of weekdays), a 3x spike, twenty
normal series, a step change in LCP, gaps, learning and the minimum count."""

from __future__ import annotations

import numpy as np

from stacklens.anomalies.decide import replay
from stacklens.anomalies.model import SEASONALITY_CODES, bands, nanmedian_last
from stacklens.anomalies.rule_fields import SENSITIVITIES

HOURS = 28 * 24
K = SENSITIVITIES["medium"]  # the default sensitivity
TUESDAY_NOON_WEEK_4 = 3 * 168 + 24 + 12  # the series start on a Monday 00:00 UTC


def weekly_shape(level: float) -> np.ndarray:
    """Expected hourly counts: a daily rhythm (busy afternoons, quiet nights), weekends at 40 %."""
    hour = np.arange(HOURS)
    day = (hour // 24) % 7
    daily = 0.8 + 0.5 * np.sin((hour % 24 - 6) / 24 * 2 * np.pi)
    return level * daily * np.where(day >= 5, 0.4, 1.0)


def fires(
    x: np.ndarray, seasonality: str, direction: str, counts: bool = True, min_count: float = 10
) -> list[int]:
    got = bands(x[None, :], seasonality, K, counts)
    sample_counts = x[None, :] if counts else np.full((1, len(x)), 100.0)
    return [
        int(i) for i in np.flatnonzero(replay(got.score, sample_counts, K, direction, min_count).starts[0])
    ]


def test_a_3x_spike_on_a_tuesday_fires_exactly_once_and_weekend_dips_never() -> None:
    rng = np.random.default_rng(7)
    expected = weekly_shape(100)
    x = rng.poisson(expected).astype(float)
    x[TUESDAY_NOON_WEEK_4] = 3 * expected[TUESDAY_NOON_WEEK_4]
    assert fires(x, "weekly", "both") == [TUESDAY_NOON_WEEK_4]
    assert fires(x, "weekly", "up") == [TUESDAY_NOON_WEEK_4]
    assert fires(x, "auto", "up") == [TUESDAY_NOON_WEEK_4]
    without = rng.poisson(expected).astype(float)  # the same weeks without the spike: weekends never fire
    assert fires(without, "weekly", "both") == []
    got = bands(x[None, :], "weekly", K, True)
    spike = TUESDAY_NOON_WEEK_4
    assert got.upper[0, spike] < x[spike] and got.score[0, spike] > 10
    assert abs(got.expected[0, spike] - expected[spike]) < 0.15 * expected[spike]
    saturday = 3 * 168 + 5 * 24 + 14
    assert got.lower[0, saturday] <= x[saturday] <= got.upper[0, saturday]
    assert SEASONALITY_CODES[got.seasonality[0, spike]] == "weekly"


def test_twenty_normal_series_fire_at_most_once_a_month_at_the_defaults() -> None:
    rng = np.random.default_rng(11)
    per_series = []
    for _ in range(20):
        x = rng.poisson(weekly_shape(rng.uniform(20, 300))).astype(float)
        per_series.append(len(fires(x, "auto", "up")))  # the defaults: auto, medium, up
    assert max(per_series) <= 1, per_series


def test_a_step_change_fires_once_then_the_band_learns_the_new_level_within_8_hours() -> None:
    rng = np.random.default_rng(3)
    lcp = 2000 * rng.lognormal(0, 0.05, HOURS)  # LCP p75 per hour, 5 % noise
    release = 20 * 24 + 9
    lcp[release:] *= 2  # a release doubles LCP
    assert fires(lcp, "auto", "up", counts=False) == [release]
    got = bands(lcp[None, :], "auto", K, False)
    firing = replay(got.score, np.full((1, HOURS), 100.0), K, "up", 20).firing[0]
    # Firing while the band learns, resolved within the documented 8 hours, never again.
    assert firing[release] and not firing[release + 8 :].any()
    learnt = got.expected[0, release + 8 : release + 48]
    # Within 15 % of the new level, also where a third week enters the baseline (never learning again).
    assert not np.isnan(learnt).any() and np.all(np.abs(learnt - 4000) < 600)


def test_a_step_in_the_hour_a_week_enters_the_baseline_fires_there() -> None:
    """A release that ships in the very hour the history's second or third week enters the baseline is
    judged against the weeks the hours before had, not learnt unseen while the level waits for 6 hours with
    the new week (a history that starts at midnight and a release shipped at midnight meet there)."""
    rng = np.random.default_rng(11)
    for weeks in (2, 3):
        js = 630_000 * rng.lognormal(0, 0.002, HOURS)  # JavaScript per page view: flat within a release
        release = weeks * 168
        js[release:] *= 1.57
        assert fires(js, "auto", "up", counts=False) == [release], weeks


def test_gaps_stay_gaps_and_a_short_history_is_learning() -> None:
    rng = np.random.default_rng(5)
    x = rng.poisson(weekly_shape(100)).astype(float)
    x[400:412] = np.nan  # twelve hours without data: not a drop to zero
    got = bands(x[None, :], "auto", K, True)
    assert np.isnan(got.score[0, 400:412]).all()
    assert fires(x, "auto", "both") == [] or all(not 400 <= i < 414 for i in fires(x, "auto", "both"))
    assert np.isnan(got.expected[0, :24]).all()  # the first day: learning, never fires
    assert (got.seasonality[0, :24] == -1).all()


def test_a_bucket_below_the_minimum_count_never_fires() -> None:
    x = np.full(HOURS, 3.0)
    x[600] = 14.0  # far above a flat 3 an hour, but fewer than 15 events
    assert fires(x, "daily", "up", min_count=15) == []
    assert fires(x, "daily", "up", min_count=10) == [600]


def test_nanmedian_last_matches_numpy() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(50, 9))
    a[rng.random(a.shape) < 0.3] = np.nan
    got, n = nanmedian_last(a)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.nanmedian(a, axis=-1)
    assert np.allclose(got, want, equal_nan=True) and (n == np.sum(~np.isnan(a), axis=-1)).all()
