"""The statistics of the release verdicts against values computed another way: exact fractions of binomial
coefficients (what SciPy's ``binomtest`` and the exact Poisson-rate test sum), the standard normal table,
and the classic order-statistic intervals of a median (Conover, Practical Nonparametric Statistics, table
A3). SciPy is not a dependency of the project, so its results are reproduced here from their definitions."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from stacklens.releases import stats


def exact_two_sided(k: int, n: int, p: Fraction) -> float:
    """scipy.stats.binomtest(k, n, p).pvalue from its definition, in exact arithmetic: the probability of
    every outcome at most as likely as k."""
    pmf = [math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1)]
    return float(sum(q for q in pmf if q <= pmf[k]))


def test_normal_tail_matches_the_table() -> None:
    assert stats.normal_sf(0.0) == pytest.approx(0.5, abs=1e-15)
    assert 2 * stats.normal_sf(1.959963984540054) == pytest.approx(0.05, abs=1e-12)
    assert stats.normal_sf(1.0) == pytest.approx(0.15865525393145707, abs=1e-12)
    assert stats.normal_sf(3.0) == pytest.approx(0.0013498980316301, abs=1e-12)
    assert stats.z_two_sided(0.05) == pytest.approx(1.959963984540054)
    assert stats.z_two_sided(0.01) == pytest.approx(2.5758293035489, abs=1e-9)


def test_exact_binomial_p_values() -> None:
    # 3 heads in 10 fair tosses: 2 * (1 + 10 + 45 + 120) / 1024.
    assert stats.binom_two_sided(3, 10, 0.5) == pytest.approx(0.34375, abs=1e-12)
    assert stats.binom_two_sided(5, 10, 0.5) == pytest.approx(1.0)
    rng = random.Random(4)
    for _ in range(40):
        n = rng.randint(1, 120)
        p = Fraction(rng.randint(1, 19), 20)
        k = rng.randint(0, n)
        assert stats.binom_two_sided(k, n, float(p)) == pytest.approx(
            exact_two_sided(k, n, p), rel=1e-9, abs=1e-12
        )
    assert stats.binom_cdf(4, 20, 0.5) == pytest.approx(
        float(sum(Fraction(math.comb(20, i), 2**20) for i in range(5)))
    )


def test_two_proportions_z_test() -> None:
    # 30 crashes of 1,000 sessions against 10 of 1,000: pooled p = 0.02, se = sqrt(0.02 * 0.98 * 0.002).
    result = stats.two_proportions(10, 1000, 30, 1000)
    z = 0.02 / math.sqrt(0.02 * 0.98 * 0.002)
    assert result.statistic == pytest.approx(z) and result.statistic == pytest.approx(3.1944, abs=1e-4)
    assert result.p_value == pytest.approx(0.0014007, abs=1e-6)
    assert stats.two_proportions(30, 1000, 10, 1000).statistic == pytest.approx(-z)
    assert stats.two_proportions(0, 100, 0, 100).p_value == 1.0  # nothing to compare
    assert stats.two_proportions(5, 0, 5, 10).p_value == 1.0


def test_poisson_rates_conditional_test() -> None:
    # 10 errors in 1,000 page loads against 25 in 1,000: given 35 errors, 25 ~ Binomial(35, 1/2) when equal.
    result = stats.poisson_rates(10, 1000, 25, 1000)
    assert result.p_value == pytest.approx(exact_two_sided(25, 35, Fraction(1, 2)), rel=1e-9)
    assert result.p_value == pytest.approx(0.0166738478, abs=1e-9)  # 2 * P(X >= 25)
    # Unequal exposures: 12 in 300 against 20 in 900 page loads.
    assert stats.poisson_rates(12, 300, 20, 900).p_value == pytest.approx(
        exact_two_sided(20, 32, Fraction(900, 1200)), rel=1e-9
    )
    # Large counts use the normal approximation: within 1 % of the exact value around p = 0.05.
    big = stats.poisson_rates(2600, 100_000, 2750, 100_000)
    z = (2750 - 2675 - 0.5) / math.sqrt(5350 * 0.25)
    assert big.p_value == pytest.approx(2 * stats.normal_sf(z), rel=1e-9)
    assert stats.poisson_rates(0, 1000, 0, 1000).p_value == 1.0


def test_quantile_intervals_are_the_textbook_order_statistics() -> None:
    values = list(range(1, 21))
    median = stats.quantile_interval(values, [1] * 20, 0.5)
    assert median is not None and (median.low, median.high) == (6, 15)  # n = 20: X(6), X(15), coverage 95.9 %
    hundred = stats.quantile_interval(list(range(1, 101)), [1] * 100, 0.5)
    assert hundred is not None and (hundred.low, hundred.high) == (40, 61)  # n = 100: X(40), X(61)
    # The interval's coverage is at least 95 %: P(l <= B < u) for B ~ Binomial(n, q).
    for n, q in ((20, 0.5), (57, 0.75), (100, 0.75), (400, 0.95), (999, 0.75), (3000, 0.75)):
        interval = stats.quantile_interval(list(range(1, n + 1)), [1] * n, q)
        assert interval is not None
        low, high = int(interval.low), int(interval.high)
        exact_q = Fraction(q).limit_denominator(100)
        coverage = float(
            sum(math.comb(n, i) * exact_q**i * (1 - exact_q) ** (n - i) for i in range(low, high))
        )  # P(low <= B < high) in exact arithmetic
        assert coverage >= 0.95 - 1e-6, (n, q, low, high, coverage)
        assert low <= math.ceil(q * n) <= high
    # Above 1,000 samples the normal approximation, still covering 95 %.
    n = 20_000
    big = stats.quantile_interval(list(range(1, n + 1)), [1] * n, 0.75)
    assert big is not None
    half = 1.959963984540054 * math.sqrt(n * 0.75 * 0.25)
    assert big.low == math.floor(15000 - half + 0.5) and big.high == math.ceil(15000 + half + 0.5)


def test_a_histogram_gives_the_order_statistics_of_its_values() -> None:
    # 100 loads: 50 at 100 ms, 30 at 200 ms, 20 at 400 ms, given in any order.
    interval = stats.quantile_interval([400.0, 100.0, 200.0], [20, 50, 30], 0.75)
    assert interval is not None and interval.samples == 100
    assert interval.value == 200.0 and interval.low == 200.0 and interval.high == 400.0
    assert stats.quantile_interval([1.0], [0], 0.75) is None


def _interpolated(sorted_values: list[float], level: float) -> float:
    """The quantile as the engine interpolates it (quantileExactWeightedInterpolated, polars' linear)."""
    position = level * (len(sorted_values) - 1)
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    return sorted_values[below] + (sorted_values[above] - sorted_values[below]) * (position - below)


def test_an_interval_read_at_a_grid_of_levels_holds_the_order_statistic_one() -> None:
    from stacklens.releases.impact import API_LEVELS, LOAD_LEVELS

    rng = random.Random(12)
    for n in (100, 250, 1000, 4000, 30_000):
        values = sorted(rng.lognormvariate(7, 0.6) for _ in range(n))
        for levels, q in ((LOAD_LEVELS, 0.75), (API_LEVELS, 0.95)):
            exact = stats.quantile_interval(values, [1] * n, q)
            graded = stats.interval_from_levels(levels, [_interpolated(values, lv) for lv in levels], n, q)
            assert exact is not None and graded is not None, (n, q)
            assert graded.low <= exact.low and graded.high >= exact.high, (n, q, graded, exact)
            assert graded.value == pytest.approx(_interpolated(values, q))
            # Dense enough near the percentile to stay close to the exact interval.
            assert graded.high - graded.low <= 2.5 * (exact.high - exact.low) + 1e-9, (n, q)
    assert stats.interval_from_levels(LOAD_LEVELS, [None] * len(LOAD_LEVELS), 100, 0.75) is None
