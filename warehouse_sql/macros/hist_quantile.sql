-- The q-quantile (linear interpolation between the ranks around q · (n − 1), as quantileExactInclusive and polars)
-- of a merged histogram of log_bucket buckets (sorted buckets, counts), as a lambda; a query applies it once to
-- the array of its histograms, `arrayMap(h -> arrayMap(${hist_quantile}, [h], [0.75])[1], [h1, h2, …])`, which
-- the engine analyses far faster than one copy per histogram. Each rank's value is its bucket's value, within
-- 0.5 % of the exact one, so the quantile is too. NULL without values.
(hist, q) -> arrayMap(
    (n, cum) -> if(n = 0, NULL,
        arrayMap(v -> v[1] + ((n - 1) * q - floor((n - 1) * q)) * (v[2] - v[1]),
            [arrayMap(i -> arrayMap(k -> multiIf(k > -100000, exp(k / 100), k = -100000, 0., -exp((-200000 - k) / 100)),
                                    [hist.1[arrayFirstIndex(c -> c > i, cum)]])[1],
                      [floor((n - 1) * q), least(floor((n - 1) * q) + 1, toFloat64(n - 1))])])[1]),
    [arraySum(hist.2)], [arrayCumSum(hist.2)])[1]
