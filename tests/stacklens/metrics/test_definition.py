"""What a metric is: the error its states' representation allows (stacklens/metrics/definition.py)."""

from __future__ import annotations

import math
import random

from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.statistics import HISTOGRAM_BUCKET_RATIO, QUANTILE_RELATIVE_ERROR


def test_the_stated_percentile_error_bounds_the_log_histogram_representation() -> None:
    # The states keep a value as the bucket round(ln(v) * 100) (buckets 1 % apart); a percentile of the bucket
    # centres is within the catalog's stated error of the exact percentile, for skewed and narrow data alike.
    assert HISTOGRAM_BUCKET_RATIO == QUANTILE_RELATIVE_ERROR == 0.01
    assert CATALOG["lcp_ms"].error == QUANTILE_RELATIVE_ERROR and CATALOG["page_loads"].error == 0.0
    rng = random.Random(7)
    for values in (
        [rng.lognormvariate(7.5, 0.6) for _ in range(5000)],
        [rng.uniform(1800, 2200) for _ in range(400)],
        [rng.uniform(0.01, 0.4) for _ in range(300)],
    ):
        exact_sorted = sorted(values)
        kept = sorted(math.exp(round(math.log(v) * 100) / 100) for v in values)
        for q in (0.5, 0.75, 0.9, 0.95, 0.99):
            rank = q * (len(values) - 1)
            low, frac = int(rank), rank - int(rank)
            high = min(low + 1, len(values) - 1)
            exact = exact_sorted[low] + (exact_sorted[high] - exact_sorted[low]) * frac
            approx = kept[low] + (kept[high] - kept[low]) * frac
            assert abs(approx - exact) <= QUANTILE_RELATIVE_ERROR * exact, (q, approx, exact)
