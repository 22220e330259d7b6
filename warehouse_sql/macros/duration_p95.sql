-- The p95 (linear interpolation between the ranks around 0.95 · (n − 1), as quantileExactInclusive and polars)
-- of the load-time histograms `dur_hist` (buckets, counts: see migrations 0132 and 0144) of the rows aggregated,
-- from the values of their buckets (exp(bucket / 100), within 0.5 % of its members; -100000 holds 0 ms): within
-- 0.5 % of the exact p95. An aggregate over the state rows themselves — the engine's weighted exact quantile
-- merges the (value, count) pairs in a hash table, several times faster than merging the histograms with sumMap
-- and reading the rank with lambdas, and the query is quicker to analyse. NULL without values.
quantileExactWeightedInterpolatedArray(0.95)(arrayMap(k -> ${duration_hist_value}, dur_hist.1), dur_hist.2)
