-- The q-quantile (linear interpolation between the ranks around q · (n − 1), as quantileExactInclusive and polars)
-- of a merged histogram of log_bucket buckets (sorted buckets, counts), as a lambda:
-- `arrayMap(${hist_quantile}, [sumMap(h.1, h.2)], [0.75])[1]`. Each rank's value is its bucket's value, within
-- 0.5 % of the exact one, so the quantile is too. NULL without values.
(hist, q) -> if(arraySum(hist.2) = 0, NULL,
    arrayMap(v -> v[1] + ((arraySum(hist.2) - 1) * q - floor((arraySum(hist.2) - 1) * q)) * (v[2] - v[1]),
        [arrayMap(k -> multiIf(k > -100000, exp(k / 100), k = -100000, 0., -exp((-200000 - k) / 100)),
            [hist.1[arrayFirstIndex(c -> c > floor((arraySum(hist.2) - 1) * q), arrayCumSum(hist.2))],
             hist.1[arrayFirstIndex(c -> c > least(floor((arraySum(hist.2) - 1) * q) + 1, toFloat64(arraySum(hist.2) - 1)),
                                    arrayCumSum(hist.2))]])])[1])
