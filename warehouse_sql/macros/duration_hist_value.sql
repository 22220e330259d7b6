-- The value of a `dur_hist` bucket `k` (macro duration_hist_key): exp(k / 100), within 0.5 % of its members; 0 ms
-- for -100000. What every reader of the request histograms takes percentiles of (macro duration_p95, Explore).
if(k = -100000, 0., exp(k / 100))
