-- One `pageload_facts` row (page load) as a state row of `pageload_hours` (the columns after the key): the fill
-- merges these per hour (macro pageload_merge), and a view's partial edge hours pass them to the same merge as the
-- state rows of its whole hours and days, so both count the same way. Plain expressions (the one lambda maps the
-- API call durations): the engine analyses them quickly, which every view query pays.
--   *_hist  (value, count) of a reported value, the value rounded to its 1 % wide log bucket: exp(round(ln(x) *
--           100) / 100) for x > 0, within 0.5 % of x at any scale (ms and the unitless CLS alike), 0 for 0 and the
--           negative of its magnitude's bucket for x < 0; a view reads a percentile with
--           quantileExactWeightedInterpolatedArray (the interpolation of quantileExactInclusive and polars)
--   dist    the page detail's distribution buckets, key metric * 2^32 + bucket (metric 1 load, 2 TTFB, 3 LCP,
--           4 FCP, 5 INP: 10 buckets per decade; 6 CLS: steps of 0.01)
toUInt64(1) AS views, ts AS first_ts,
load_ms AS load_sum, ([multiIf(load_ms > 0, exp(round(log(load_ms) * 100) / 100), load_ms = 0, 0., -exp(round(log(-load_ms) * 100) / 100))], [toUInt64(1)]) AS load_hist,
ifNull(ttfb, 0) AS ttfb_sum, toUInt64(ttfb IS NOT NULL) AS ttfb_n,
(if(ttfb IS NULL, [], [multiIf(assumeNotNull(ttfb) > 0, exp(round(log(assumeNotNull(ttfb)) * 100) / 100), assumeNotNull(ttfb) = 0, 0., -exp(round(log(-assumeNotNull(ttfb)) * 100) / 100))]), if(ttfb IS NULL, [], [toUInt64(1)])) AS ttfb_hist,
ifNull(dom_ready, 0) AS dom_sum, toUInt64(dom_ready IS NOT NULL) AS dom_n,
(if(dom_ready IS NULL, [], [multiIf(assumeNotNull(dom_ready) > 0, exp(round(log(assumeNotNull(dom_ready)) * 100) / 100), assumeNotNull(dom_ready) = 0, 0., -exp(round(log(-assumeNotNull(dom_ready)) * 100) / 100))]), if(dom_ready IS NULL, [], [toUInt64(1)])) AS dom_hist,
ifNull(resource_ms, 0) AS resource_sum, toUInt64(resource_ms IS NOT NULL) AS resource_n,
toUInt64(lcp IS NOT NULL) AS lcp_n,
(if(lcp IS NULL, [], [multiIf(assumeNotNull(lcp) > 0, exp(round(log(assumeNotNull(lcp)) * 100) / 100), assumeNotNull(lcp) = 0, 0., -exp(round(log(-assumeNotNull(lcp)) * 100) / 100))]), if(lcp IS NULL, [], [toUInt64(1)])) AS lcp_hist,
toUInt64(inp IS NOT NULL) AS inp_n,
(if(inp IS NULL, [], [multiIf(assumeNotNull(inp) > 0, exp(round(log(assumeNotNull(inp)) * 100) / 100), assumeNotNull(inp) = 0, 0., -exp(round(log(-assumeNotNull(inp)) * 100) / 100))]), if(inp IS NULL, [], [toUInt64(1)])) AS inp_hist,
toUInt64(cls IS NOT NULL) AS cls_n,
(if(cls IS NULL, [], [multiIf(assumeNotNull(cls) > 0, exp(round(log(assumeNotNull(cls)) * 100) / 100), assumeNotNull(cls) = 0, 0., -exp(round(log(-assumeNotNull(cls)) * 100) / 100))]), if(cls IS NULL, [], [toUInt64(1)])) AS cls_hist,
toUInt64(fcp IS NOT NULL) AS fcp_n,
(if(fcp IS NULL, [], [multiIf(assumeNotNull(fcp) > 0, exp(round(log(assumeNotNull(fcp)) * 100) / 100), assumeNotNull(fcp) = 0, 0., -exp(round(log(-assumeNotNull(fcp)) * 100) / 100))]), if(fcp IS NULL, [], [toUInt64(1)])) AS fcp_hist,
ifNull(score, 0) AS score_sum, toUInt64(score IS NOT NULL) AS score_n,
toUInt64(api_calls) AS api_calls, toUInt64(api_errors) AS api_errors,
(arrayMap(x -> multiIf(x > 0, exp(round(log(x) * 100) / 100), x = 0, 0., -exp(round(log(-x) * 100) / 100)), api_ms),
 arrayWithConstant(length(api_ms), toUInt64(1))) AS api_hist,
js_bytes,
(arrayConcat([1 * 4294967296 + toInt64(floor(log10(greatest(load_ms, 1)) * 10))],
             if(ttfb IS NULL, [], [2 * 4294967296 + toInt64(floor(log10(greatest(assumeNotNull(ttfb), 1)) * 10))]),
             if(lcp IS NULL, [], [3 * 4294967296 + toInt64(floor(log10(greatest(assumeNotNull(lcp), 1)) * 10))]),
             if(fcp IS NULL, [], [4 * 4294967296 + toInt64(floor(log10(greatest(assumeNotNull(fcp), 1)) * 10))]),
             if(inp IS NULL, [], [5 * 4294967296 + toInt64(floor(log10(greatest(assumeNotNull(inp), 1)) * 10))]),
             if(cls IS NULL, [], [6 * 4294967296 + toInt64(floor(assumeNotNull(cls) * 100))])),
 arrayWithConstant(1 + (ttfb IS NOT NULL) + (lcp IS NOT NULL) + (fcp IS NOT NULL) + (inp IS NOT NULL)
                   + (cls IS NOT NULL), toUInt64(1))) AS dist
