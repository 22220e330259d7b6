-- A page-load value `x` (load time, a vital, an API call's duration) as the page-load histograms keep it: the
-- value of its 1 % wide log bucket, exp(round(ln(x) * 100) / 100) as a Float32, within 0.5 % of x at any scale (ms
-- and the unitless CLS alike); 0 for 0 and the negative of its magnitude's bucket for x < 0. The `*_hist` columns
-- of `pageload_facts` (migration 0138, over `x` of arrayMap) hold it, the states merge them with sumMap and every
-- reader takes percentiles with quantileExactWeightedInterpolated; the `*_bucket` columns of `transactions`
-- (migration 0015) hold it per raw page load for Explore (queries/explore/pageloads.sql), so its percentiles are
-- the views', to the last digit. Frozen: migrations 0138 and 0015 render it into their checksums; another
-- bucketing is a new macro and new columns.
toFloat32(multiIf(x > 0, exp(round(log(x) * 100) / 100), x = 0, 0., -exp(round(log(-x) * 100) / 100)))
