"""The statistics behind release verdicts, in plain Python (no SciPy on the server): the normal tail, the
exact binomial distribution, the two-proportion z-test, the comparison of two Poisson rates and the
distribution-free confidence interval of a quantile read from histogram counts.

Each test answers a two-sided p-value: a release is called worse only when the difference points the bad way
*and* the p-value is below 0.05 (docs/releases.md). The results match SciPy's ``norm.sf``,
``binomtest(...).pvalue`` and ``poisson_means_test``-style conditional tests to 1e-9 where they are exact
(tests/stacklens/releases/test_stats.py checks hand-computed values).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.05
Z_95 = 1.959963984540054  # the two-sided 95 % quantile of the standard normal
# Up to this many trials the binomial is summed exactly (under a millisecond); beyond, its normal
# approximation with the continuity correction, whose error in a tail near the 2.5 % the verdicts test against
# is then a few hundredths of a percent — and a list of 100 releases judges 400 figures, each exact sum being
# O(n).
EXACT_TRIALS = 1000
# scipy.stats.binomtest's tolerance for "as likely as the observed count" (floating-point ties).
_RELATIVE_TIE = 1 + 1e-7


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _log_pmf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )


def binom_pmf(k: int, n: int, p: float) -> float:
    return math.exp(_log_pmf(k, n, p)) if 0 <= k <= n else 0.0


def binom_pmfs(n: int, p: float) -> list[float]:
    """P(B = k) for k = 0 … n, by the recurrence of consecutive terms in logarithms (one lgamma, not n)."""
    if p <= 0.0 or p >= 1.0:
        return [binom_pmf(k, n, p) for k in range(n + 1)]
    step = math.log(p) - math.log1p(-p)
    log_pmf = n * math.log1p(-p)
    out = [math.exp(log_pmf)]
    for k in range(n):
        log_pmf += math.log(n - k) - math.log(k + 1) + step
        out.append(math.exp(log_pmf))
    return out


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(B <= k) for B ~ Binomial(n, p); exact up to EXACT_TRIALS, else normal with continuity correction."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= EXACT_TRIALS:
        return min(1.0, math.fsum(binom_pmfs(n, p)[: k + 1]))
    sd = math.sqrt(n * p * (1 - p))
    return 1.0 - normal_sf((k + 0.5 - n * p) / sd) if sd > 0 else float(k >= n * p)


def binom_two_sided(k: int, n: int, p: float) -> float:
    """The two-sided p-value of ``k`` successes in ``n`` trials against success probability ``p``: the
    probability of every outcome at most as likely as ``k`` (scipy.stats.binomtest's definition)."""
    if n == 0:
        return 1.0
    if n > EXACT_TRIALS:
        sd = math.sqrt(n * p * (1 - p))
        if sd == 0:
            return 1.0 if k == round(n * p) else 0.0
        return min(1.0, 2.0 * normal_sf(max(0.0, abs(k - n * p) - 0.5) / sd))
    pmfs = binom_pmfs(n, p)
    if pmfs[k] == 0.0:
        return 0.0
    limit = pmfs[k] * _RELATIVE_TIE
    return min(1.0, math.fsum(q for q in pmfs if q <= limit))


@dataclass(frozen=True)
class TestResult:
    statistic: float  # z, or the observed count of the conditional test
    p_value: float


def two_proportions(x1: int, n1: int, x2: int, n2: int) -> TestResult:
    """Pooled two-proportion z-test of x1/n1 against x2/n2 (two-sided); z > 0 when the second is higher."""
    if n1 <= 0 or n2 <= 0:
        return TestResult(0.0, 1.0)
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return TestResult(0.0, 1.0)
    z = (x2 / n2 - x1 / n1) / se
    return TestResult(z, 2.0 * normal_sf(abs(z)))


def poisson_rates(k1: int, t1: float, k2: int, t2: float) -> TestResult:
    """Whether the rates k1/t1 and k2/t2 of two Poisson counts over exposures t1, t2 differ (two-sided): given
    the k1 + k2 events, k2 is Binomial(k1 + k2, t2 / (t1 + t2)) when the rates are equal — the exact
    conditional test (Przyborowski and Wilenski), normal beyond EXACT_TRIALS events."""
    if t1 <= 0 or t2 <= 0:
        return TestResult(0.0, 1.0)
    total = k1 + k2
    return TestResult(float(k2), binom_two_sided(k2, total, t2 / (t1 + t2)))


@dataclass(frozen=True)
class QuantileInterval:
    value: float  # the quantile read from the histogram (the order statistic at rank ceil(q * n))
    low: float
    high: float
    samples: int


def _rank_bounds(n: int, q: float, alpha: float) -> tuple[int, int]:
    """1-based ranks (l, u) with P(X_(l) <= the q-quantile <= X_(u)) >= 1 - alpha, from B ~ Binomial(n, q),
    the number of samples below the quantile: l the largest rank with P(B < l) <= alpha / 2, u the smallest
    with P(B < u) >= 1 - alpha / 2 (Conover, Practical Nonparametric Statistics, 3.2); clamped to [1, n]."""
    if n <= EXACT_TRIALS:
        pmfs = binom_pmfs(n, q)
        low, cumulative = 0, 0.0
        while low < n and cumulative + pmfs[low] <= alpha / 2:
            cumulative += pmfs[low]
            low += 1
        high, cumulative = 0, 0.0
        while high < n and cumulative < 1 - alpha / 2:
            cumulative += pmfs[high]
            high += 1
        return max(1, low), max(1, min(n, high))
    # The same bounds from the normal approximation of B, with the continuity correction.
    half = z_two_sided(alpha) * math.sqrt(n * q * (1 - q))
    return max(1, math.floor(n * q - half + 0.5)), min(n, math.ceil(n * q + half + 0.5))


def z_two_sided(alpha: float) -> float:
    """The z with P(|Z| > z) = alpha (1.96 for 0.05), by bisection of :func:`normal_sf`."""
    if alpha == ALPHA:
        return Z_95
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 2 * normal_sf(mid) > alpha else (lo, mid)
    return (lo + hi) / 2


def _value_at(pairs: list[tuple[float, int]], rank: int) -> float:
    seen = 0
    for value, count in pairs:
        seen += count
        if seen >= rank:
            return value
    return pairs[-1][0]


def quantile_interval(
    values: Sequence[float], counts: Sequence[int], q: float, alpha: float = ALPHA
) -> QuantileInterval | None:
    """The q-quantile of a histogram (bucket values and counts, any order) with its distribution-free
    1 - alpha confidence interval from the order statistics around rank q·n; None without samples."""
    pairs = sorted((float(v), int(c)) for v, c in zip(values, counts, strict=True) if int(c) > 0)
    n = sum(c for _, c in pairs)
    if n == 0:
        return None
    low, high = _rank_bounds(n, q, alpha)
    return QuantileInterval(
        _value_at(pairs, max(1, math.ceil(q * n))), _value_at(pairs, low), _value_at(pairs, high), n
    )


def interval_from_levels(
    levels: Sequence[float], values: Sequence[float | None], n: int, q: float, alpha: float = ALPHA
) -> QuantileInterval | None:
    """The q-quantile and a 1 - alpha interval never narrower than the order-statistic one of
    :func:`quantile_interval`, from the quantiles of the same samples at a grid of ``levels`` (ascending,
    ``q`` among them): the exact ranks (l, u) sit at the interpolated levels (l - 1) / (n - 1) and (u - 1)
    / (n - 1); the bounds are the values at the nearest grid levels outside them. None without samples, or
    when the grid does not reach that far (too few samples for the grid)."""
    if n <= 0 or q not in levels:
        return None
    value = values[list(levels).index(q)]
    if value is None or value != value:
        return None
    low_rank, high_rank = _rank_bounds(n, q, alpha)
    span = max(n - 1, 1)
    low_level, high_level = (low_rank - 1) / span, (high_rank - 1) / span
    lows = [v for level, v in zip(levels, values, strict=True) if level <= low_level + 1e-12]
    highs = [v for level, v in zip(levels, values, strict=True) if level >= high_level - 1e-12]
    if not lows or not highs or lows[-1] is None or highs[0] is None:
        return None
    return QuantileInterval(float(value), float(lows[-1]), float(highs[0]), n)
