-- Each page load's histogram entries as `pageload_hours` holds them, computed when the row is written, so a view
-- that reads the partial edge hours of its window from `pageload_facts` (macro pageload_window) selects stored
-- columns instead of having the engine analyse these expressions on every query.
--   *_hist  (value, count) of a reported value (empty when not reported), the value rounded to its 1 % wide log
--           bucket: exp(round(ln(x) * 100) / 100) for x > 0, within 0.5 % of x at any scale (ms and the unitless
--           CLS alike), 0 for 0 and the negative of its magnitude's bucket for x < 0. Merged per hour and day with
--           sumMap, read with quantileExactWeightedInterpolatedArray (the interpolation of quantileExactInclusive
--           and polars), so every percentile is within 0.5 % of the exact one.
--   dist    the page detail's distribution buckets, key metric * 2^32 + bucket (metric 1 load, 2 TTFB, 3 LCP,
--           4 FCP, 5 INP: 10 buckets per decade; 6 CLS: steps of 0.01), counted exactly.
-- Rows written before (if any) are replaced by the rebuild 0136 starts.
ALTER TABLE pageload_facts
    ADD COLUMN IF NOT EXISTS load_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value}, [load_ms]),
         [toUInt32(1)])
        AFTER materialized_at,
    ADD COLUMN IF NOT EXISTS ttfb_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(ttfb IS NULL, [], [assumeNotNull(ttfb)])),
         if(ttfb IS NULL, [], [toUInt32(1)]))
        AFTER load_hist,
    ADD COLUMN IF NOT EXISTS dom_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(dom_ready IS NULL, [], [assumeNotNull(dom_ready)])),
         if(dom_ready IS NULL, [], [toUInt32(1)]))
        AFTER ttfb_hist,
    ADD COLUMN IF NOT EXISTS lcp_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(lcp IS NULL, [], [assumeNotNull(lcp)])),
         if(lcp IS NULL, [], [toUInt32(1)]))
        AFTER dom_hist,
    ADD COLUMN IF NOT EXISTS inp_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(inp IS NULL, [], [assumeNotNull(inp)])),
         if(inp IS NULL, [], [toUInt32(1)]))
        AFTER lcp_hist,
    ADD COLUMN IF NOT EXISTS cls_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(cls IS NULL, [], [assumeNotNull(cls)])),
         if(cls IS NULL, [], [toUInt32(1)]))
        AFTER inp_hist,
    ADD COLUMN IF NOT EXISTS fcp_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(fcp IS NULL, [], [assumeNotNull(fcp)])),
         if(fcp IS NULL, [], [toUInt32(1)]))
        AFTER cls_hist,
    ADD COLUMN IF NOT EXISTS api_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value}, api_ms),
         arrayWithConstant(length(api_ms), toUInt32(1)))
        AFTER fcp_hist,
    ADD COLUMN IF NOT EXISTS dist Tuple(Array(Int64), Array(UInt32)) MATERIALIZED
        (arrayConcat([1 * 4294967296 + toInt64(floor(log10(greatest(load_ms, 1)) * 10))],
                     if(ttfb IS NULL, [], [2 * 4294967296
                                           + toInt64(floor(log10(greatest(assumeNotNull(ttfb), 1)) * 10))]),
                     if(lcp IS NULL, [], [3 * 4294967296
                                           + toInt64(floor(log10(greatest(assumeNotNull(lcp), 1)) * 10))]),
                     if(fcp IS NULL, [], [4 * 4294967296
                                           + toInt64(floor(log10(greatest(assumeNotNull(fcp), 1)) * 10))]),
                     if(inp IS NULL, [], [5 * 4294967296
                                           + toInt64(floor(log10(greatest(assumeNotNull(inp), 1)) * 10))]),
                     if(cls IS NULL, [], [6 * 4294967296 + toInt64(floor(assumeNotNull(cls) * 100))])),
         arrayWithConstant(1 + (ttfb IS NOT NULL) + (lcp IS NOT NULL) + (fcp IS NOT NULL) + (inp IS NOT NULL)
                           + (cls IS NOT NULL), toUInt32(1)))
        AFTER api_hist
