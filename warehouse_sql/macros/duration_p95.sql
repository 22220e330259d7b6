-- The p95 (linear interpolation between the ranks around 0.95 · (n − 1), as quantileExactInclusive and polars)
-- of the load-time histograms `dur_hist` of the rows aggregated, from the values of their buckets (macro
-- duration_values): within 0.5 % of the exact p95. An aggregate over the state rows themselves — the engine's
-- weighted exact quantile merges the (value, count) pairs in a hash table, several times faster than merging the
-- histograms with sumMap and reading the rank with lambdas, and the query is quicker to analyse.
quantileExactWeightedInterpolatedArray(0.95)(${duration_values}, dur_hist.2)
