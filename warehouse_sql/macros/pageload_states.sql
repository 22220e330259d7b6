-- The per-key aggregates of `pageload_hours`, over `pageload_facts` rows. Shared by the hourly fill and the views'
-- partial edge hours so both count the same way. Used after the key columns. Each *_hist is (log_bucket, count)
-- of the measure's reported values, *_n how many were reported (NULL = not reported); `dist` counts the page
-- detail's distribution buckets exactly, keyed metric · 2^32 + bucket (metric 1 load, 2 TTFB, 3 LCP, 4 FCP, 5 INP:
-- 10 buckets per decade; 6 CLS: steps of 0.01).
count() AS views, min(ts) AS first_ts,
sum(load_ms) AS load_sum, sumMap(arrayMap(${log_bucket}, [load_ms]), [toUInt64(1)]) AS load_hist,
sum(ifNull(ttfb, 0)) AS ttfb_sum, count(ttfb) AS ttfb_n,
sumMapIf(arrayMap(${log_bucket}, [assumeNotNull(ttfb)]), [toUInt64(1)], ttfb IS NOT NULL) AS ttfb_hist,
sum(ifNull(dom_ready, 0)) AS dom_sum, count(dom_ready) AS dom_n,
sumMapIf(arrayMap(${log_bucket}, [assumeNotNull(dom_ready)]), [toUInt64(1)], dom_ready IS NOT NULL) AS dom_hist,
sum(ifNull(resource_ms, 0)) AS resource_sum, count(resource_ms) AS resource_n,
count(lcp) AS lcp_n, sumMapIf(arrayMap(${log_bucket}, [assumeNotNull(lcp)]), [toUInt64(1)], lcp IS NOT NULL) AS lcp_hist,
count(inp) AS inp_n, sumMapIf(arrayMap(${log_bucket}, [assumeNotNull(inp)]), [toUInt64(1)], inp IS NOT NULL) AS inp_hist,
count(cls) AS cls_n, sumMapIf(arrayMap(${log_bucket}, [assumeNotNull(cls)]), [toUInt64(1)], cls IS NOT NULL) AS cls_hist,
count(fcp) AS fcp_n, sumMapIf(arrayMap(${log_bucket}, [assumeNotNull(fcp)]), [toUInt64(1)], fcp IS NOT NULL) AS fcp_hist,
sum(ifNull(score, 0)) AS score_sum, count(score) AS score_n,
sum(api_calls) AS api_calls, sum(api_errors) AS api_errors,
sumMap(arrayMap(${log_bucket}, api_ms), arrayMap(x -> toUInt64(1), api_ms)) AS api_hist,
sum(js_bytes) AS js_bytes,
sumMap(arrayMap(v -> toInt64(v.1) * 4294967296
                     + if(v.1 = 6, toInt64(floor(assumeNotNull(v.2) * 100)),
                          toInt64(floor(log10(greatest(assumeNotNull(v.2), 1)) * 10))),
                arrayFilter(v -> v.2 IS NOT NULL, [(1, toNullable(load_ms)), (2, ttfb), (3, lcp), (4, fcp), (5, inp), (6, cls)])),
       arrayMap(v -> toUInt64(1),
                arrayFilter(v -> v.2 IS NOT NULL, [(1, toNullable(load_ms)), (2, ttfb), (3, lcp), (4, fcp), (5, inp), (6, cls)])))
    AS dist
