-- One `pageload_facts` row (page load) as a state row of `pageload_periods` (the columns after the key; the histogram
-- entries are stored with the row, migration 0138): the fill merges these per hour (macro pageload_merge), and a
-- view's partial edge hours pass them to the same merge as the state rows of its whole hours and days, so both
-- count the same way.
toUInt64(1) AS views, ts AS first_ts, load_ms AS load_sum, load_hist,
ifNull(ttfb, 0) AS ttfb_sum, toUInt64(ttfb IS NOT NULL) AS ttfb_n, ttfb_hist,
ifNull(dom_ready, 0) AS dom_sum, toUInt64(dom_ready IS NOT NULL) AS dom_n, dom_hist,
ifNull(resource_ms, 0) AS resource_sum, toUInt64(resource_ms IS NOT NULL) AS resource_n,
toUInt64(lcp IS NOT NULL) AS lcp_n, lcp_hist, toUInt64(inp IS NOT NULL) AS inp_n, inp_hist,
toUInt64(own_inp IS NOT NULL) AS own_inp_n, own_inp_hist,
toUInt64(cls IS NOT NULL) AS cls_n, cls_hist, toUInt64(fcp IS NOT NULL) AS fcp_n, fcp_hist,
ifNull(score, 0) AS score_sum, toUInt64(score IS NOT NULL) AS score_n,
toUInt64(api_calls) AS api_calls, toUInt64(api_errors) AS api_errors, api_hist, js_bytes, total_bytes, dist
