"""Release verdicts: a regression only when a figure is worse by more than its effect size and
significantly so at 95 %, with a minimum sample; otherwise "no significant change" with both values and
counts; every reason names the metric, both values and both sample sizes."""

from __future__ import annotations

import random

import pytest

from stacklens.releases.stats import QuantileInterval, quantile_interval
from stacklens.releases.verdicts import (
    IMPROVEMENT,
    NO_CHANGE,
    REGRESSION,
    RULES,
    TOO_FEW,
    Figures,
    compare,
    verdict,
)

RULE = {r.key: r for r in RULES}


def sessions(
    version: str, n: int, crashed: int, errored: int | None = None, users: int = 0, crashed_users: int = 0
) -> Figures:
    return Figures(
        version,
        sessions=n,
        crashed_sessions=crashed,
        errored_sessions=crashed if errored is None else errored,
        users=users,
        crashed_users=crashed_users,
    )


def test_a_significant_drop_in_crash_free_sessions_is_a_regression_named_with_both_counts() -> None:
    before = sessions("shop@1.2.0", 2000, 10, errored=300)  # 99.50 % crash-free, 15.0 % errored
    now = sessions("shop@1.3.0", 1500, 60, errored=230)  # 96.00 % crash-free, 15.3 % errored
    result = verdict(now, before)
    assert result.regression and result.previous_release == "shop@1.2.0"
    (reason,) = result.reasons
    assert reason.startswith(
        "crash-free sessions 96.00 % (1,500 sessions) vs 99.50 % (2,000 sessions) in shop@1.2.0"
    )
    assert "−3.5 points, p < 0.001" in reason and "(worse by more than 0.5 points)" in reason
    comparison, errored = result.comparisons
    assert errored.outcome == NO_CHANGE and errored.reason.startswith(
        "no significant change in errored sessions"
    )
    assert (
        comparison.outcome == REGRESSION
        and comparison.change == pytest.approx(-3.5)
        and comparison.p_value < 0.001
    )
    assert (comparison.current_samples, comparison.previous_samples) == (1500, 2000)


def test_a_small_sample_is_never_a_regression() -> None:
    before = sessions("a", 2000, 10)
    now = sessions("b", 60, 30)  # 50 % crash-free, but 60 sessions
    result = verdict(now, before)
    assert not result.regression
    assert result.comparisons[0].outcome == TOO_FEW
    assert (
        "crash-free sessions: too few sessions to compare (60 vs 2,000; at least 100 each)" in result.reasons
    )


def test_a_difference_within_chance_is_no_significant_change_with_both_counts() -> None:
    before = sessions("shop@1.0.0", 400, 4)  # 99.0 %
    now = sessions("shop@1.1.0", 300, 6)  # 98.0 %: 1 point worse, p ~ 0.27
    result = verdict(now, before)
    assert not result.regression
    comparison = result.comparisons[0]
    assert comparison.outcome == NO_CHANGE and comparison.p_value is not None and comparison.p_value > 0.05
    assert comparison.reason.startswith(
        "no significant change in crash-free sessions: 98.00 % (300 sessions) vs 99.00 % (400 sessions) in shop@1.0.0"
    )


def test_a_significant_change_within_the_effect_size_is_not_a_regression() -> None:
    # A million sessions each: 0.2 points worse is significant but smaller than the 0.5-point effect size.
    before = sessions("a", 1_000_000, 5_000)
    now = sessions("b", 1_000_000, 7_000)
    comparison = compare(RULE["crash_free_sessions"], now, before)
    assert comparison is not None and comparison.outcome == NO_CHANGE and comparison.p_value < 1e-6
    assert comparison.reason.startswith("crash-free sessions changed by less than 0.5 points")
    assert not verdict(now, before).regression


def test_better_releases_improve() -> None:
    comparison = compare(RULE["crash_free_sessions"], sessions("b", 2000, 10), sessions("a", 2000, 80))
    assert comparison is not None and comparison.outcome == IMPROVEMENT


def test_errors_per_page_load_compare_rates_not_counts() -> None:
    # The demo's old report: 41 errors in 120 page loads against 15 in 48 was "errors +173 %" — as a rate it
    # is +9 %, and not significant.
    before = Figures("shop@1.0.0", page_loads=48, error_events=15)
    now = Figures("shop@1.1.0", page_loads=120, error_events=41)
    comparison = compare(RULE["errors_per_1k_page_loads"], now, before)
    assert comparison is not None and comparison.outcome == TOO_FEW  # fewer than 100 page loads before
    before = Figures("shop@1.0.0", page_loads=480, error_events=150)
    now = Figures("shop@1.1.0", page_loads=1200, error_events=410)
    comparison = compare(RULE["errors_per_1k_page_loads"], now, before)
    assert comparison is not None and comparison.outcome == NO_CHANGE
    assert comparison.change is not None and round(comparison.change, 1) == 9.3
    assert "341.7 per 1,000 (1,200 page loads) vs 312.5 per 1,000 (480 page loads)" in comparison.reason
    worse = compare(
        RULE["errors_per_1k_page_loads"],
        Figures("b", page_loads=1000, error_events=60),
        Figures("a", page_loads=1000, error_events=20),
    )
    assert worse is not None and worse.outcome == REGRESSION and "+200.0 %" in worse.reason


def _loads(version: str, n: int, scale: float, seed: int) -> Figures:
    rng = random.Random(seed)
    values = [round(rng.lognormvariate(7, 0.5) * scale, -1) for _ in range(n)]
    buckets: dict[float, int] = {}
    for v in values:
        buckets[v] = buckets.get(v, 0) + 1
    interval = quantile_interval(list(buckets), list(buckets.values()), 0.75)
    assert interval is not None
    return Figures(version, page_loads=n, load_p75=interval, js_bytes_per_view=250_000.0)


def test_load_time_p75_is_worse_only_when_the_intervals_part() -> None:
    same = compare(RULE["load_p75"], _loads("b", 400, 1.0, 2), _loads("a", 400, 1.0, 1))
    assert same is not None and same.outcome == NO_CHANGE
    slower = compare(RULE["load_p75"], _loads("b", 400, 1.6, 2), _loads("a", 400, 1.0, 1))
    assert slower is not None and slower.outcome == REGRESSION
    assert (
        "load time p75" in slower.reason and "(95 % CI" in slower.reason and "400 page loads" in slower.reason
    )
    # Intervals that overlap are no regression, however large the difference of the two values.
    wide = compare(
        RULE["load_p75"],
        Figures("b", page_loads=120, load_p75=QuantileInterval(1500.0, 1000.0, 2200.0, 120)),
        Figures("a", page_loads=120, load_p75=QuantileInterval(1000.0, 800.0, 1100.0, 120)),
    )
    assert wide is not None and wide.outcome == NO_CHANGE and wide.change == 50.0


def test_javascript_per_view_is_a_relative_change_with_a_minimum_sample() -> None:
    big = compare(
        RULE["js_bytes_per_view"],
        Figures("b", page_loads=100, js_bytes_per_view=300_000.0),
        Figures("a", page_loads=100, js_bytes_per_view=250_000.0),
    )
    assert (
        big is not None
        and big.outcome == REGRESSION
        and "293.0 KiB (100 page loads) vs 244.1 KiB" in big.reason
    )
    small = compare(
        RULE["js_bytes_per_view"],
        Figures("b", page_loads=100, js_bytes_per_view=260_000.0),
        Figures("a", page_loads=100, js_bytes_per_view=250_000.0),
    )
    assert small is not None and small.outcome == NO_CHANGE
    thin = compare(
        RULE["js_bytes_per_view"],
        Figures("b", page_loads=5, js_bytes_per_view=900_000.0),
        Figures("a", page_loads=100, js_bytes_per_view=250_000.0),
    )
    assert thin is not None and thin.outcome == TOO_FEW


def test_the_first_release_and_releases_without_common_figures() -> None:
    first = verdict(sessions("a", 100, 1), None)
    assert not first.regression and first.reasons == (
        "the first release in this window: no previous release to compare with",
    )
    nothing = verdict(Figures("b"), Figures("a"))
    assert not nothing.regression and nothing.reasons == ("nothing to compare with a",)
    assert verdict(sessions("b", 500, 1), sessions("a", 500, 1)).as_dict()["regression"] is False


def test_verdicts_do_not_drift_with_live_traffic() -> None:
    """Releases watched as their sessions arrive, a verdict at every 250 sessions: one as good as the release
    before it is called a regression at fewer than 5 % of the looks (each look is a test at 95 % that also
    needs a 0.5-point drop), and one truly worse is called one from the point its sample shows it, and
    stays called."""
    rng = random.Random(9)
    before = sessions("a", 5000, 50)  # 99.0 %
    looks = flagged_good = 0
    settled_bad = 0
    for _ in range(200):
        crashed_good = crashed_bad = 0
        bad_calls = []
        for n in range(1, 5001):
            crashed_good += rng.random() < 0.01
            crashed_bad += rng.random() < 0.03
            if n % 250 == 0:
                looks += 1
                flagged_good += verdict(sessions("b", n, crashed_good), before).regression
                bad_calls.append(verdict(sessions("b", n, crashed_bad), before).regression)
        settled_bad += all(bad_calls[4:])  # from 1,250 sessions on, every look
    assert flagged_good / looks < 0.05
    assert settled_bad >= 195
