"""The statistics a metric can be summarised by over a window, and the stated error of each.

Percentiles read from the views' states (1 % log histograms: a value is kept as the bucket ``round(ln(v) *
100)``, neighbouring buckets 1 % apart) are within :data:`QUANTILE_RELATIVE_ERROR` of the exact percentile
of the raw rows; counts, sums, minimums and maximums are exact; an average is a sum over a count, exact up
to float rounding."""

from __future__ import annotations

from dataclasses import dataclass

# Neighbouring buckets of the states' log histograms are 1 % apart (a bucket holds values within ±0.5 % of its
# centre); a percentile read from them is within this relative error of the exact percentile of the raw rows.
HISTOGRAM_BUCKET_RATIO = 0.01
QUANTILE_RELATIVE_ERROR = 0.01


@dataclass(frozen=True)
class Statistic:
    key: str  # "p75", "avg", "rate_per_1k", …
    label: str
    quantile: float | None = None  # 0.75 for p75; None for the others
    exact: bool = True  # False: within QUANTILE_RELATIVE_ERROR when read from the histogram states

    @property
    def error(self) -> float:
        """The relative error the catalog states for this statistic (0 = exact)."""
        return 0.0 if self.exact else QUANTILE_RELATIVE_ERROR


def _percentile(q: int) -> Statistic:
    return Statistic(f"p{q}", f"{q}th percentile", q / 100, exact=False)


STATISTICS: dict[str, Statistic] = {
    s.key: s
    for s in (
        _percentile(50),
        _percentile(75),
        _percentile(90),
        _percentile(95),
        _percentile(99),
        Statistic("avg", "average"),
        Statistic("sum", "sum"),
        Statistic("min", "minimum"),
        Statistic("max", "maximum"),
        Statistic("count", "count"),
        Statistic("rate_per_1k", "per 1,000 page loads"),
    )
}


def percentile_value(samples: int, value: float | None, average: float | None) -> float | None:
    """A percentile read from the states, with the sample itself when there is one sample.

    A percentile of one sample is that sample, and the exact average beside it is too; the histogram
    answers the centre of the sample's 1 % bucket (within 0.5 %), which can read below that average ("p95
    4.3 ms, average 4.4 ms" for a one-call endpoint). Views, budgets and alert rules take the percentile
    through here, so they keep agreeing with each other."""
    if samples == 1 and average is not None:
        return average
    return value
