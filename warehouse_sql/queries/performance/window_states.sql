-- Many metric windows in one query over the states the performance views read, for budgets and alert rules
-- (stacklens/performance/window_values.py): the page loads' `pageload_periods` (macro pageload_window) and the
-- server side's API calls in `endpoint_call_periods` (macro endpoint_window, source 'server': http.server
-- transactions, `path` their route), one branch each (an empty project list reads nothing). A target is (id,
-- pattern, window bit, environment, release, browser, metric): a state row counts for the targets of its project
-- whose window is tiled by the row's period — the bit of the target's window in the period's mask (a period's key
-- being its grain's minutes * 2^32 + its start), the periods being those of ViewFilters.periods with minutes
-- (minutes at the partial edge hours, whole hours, blocks of days),
-- as a view cuts the same window — whose pattern (LIKE) matches its page (route) and whose filters ('' = any) match
-- its environment, release and browser. Merged per target as the views merge them: counts and sums added,
-- percentiles of the merged 1 % log histograms (quantileExactWeightedInterpolatedArray, the views' function;
-- `dur_hist` read as the macro duration_p95 reads it). One query, not one per kind: each is another round trip
-- and another plan (bench/RESULTS.md, "One window evaluation").
-- `{metric_columns}`: a page-load target's metric picks its count, histogram and sum (`samples`, `hist`,
-- `total`): a `multiIf` on `metric` written by window_values.py from its table of metrics (constant column names).
-- An API target's metric code 1 (error_pct) sums the calls answered 4xx or 5xx as its `total` (the endpoints view's
-- error rate: (s4xx + s5xx) / calls), code 0 the durations.
SELECT target, sum(samples) AS samples, sum(total) AS total,
       quantilesExactWeightedInterpolatedArray(0.5, 0.75, 0.9, 0.95, 0.99)(hist.1, hist.2) AS quantiles
FROM
(
    SELECT request.1 AS target, request.7 AS metric, {metric_columns}
    FROM
    (
        SELECT project_id, page, environment, release, browser, views, load_sum, load_hist, ttfb_sum, ttfb_n,
               ttfb_hist, dom_sum, dom_n, dom_hist, lcp_n, lcp_hist, inp_n, inp_hist, cls_n, cls_hist, fcp_n,
               fcp_hist, js_bytes, total_bytes,
               transform(toUInt64(CAST(grain, 'UInt16')) * 4294967296 + toUInt32(start), {period_keys:Array(UInt64)},
                         {period_masks:Array(UInt64)}, toUInt64(0)) AS mask
        FROM pageload_periods FINAL
        WHERE project_id IN {pageload_projects:Array(UInt64)}
          AND ${period_tiles}
    )
    ARRAY JOIN arrayFilter(x -> bitTest(mask, x.3) AND page LIKE x.2 AND (x.4 = '' OR environment = x.4)
                                AND (x.5 = '' OR release = x.5) AND (x.6 = '' OR browser = x.6),
                           {pageload_targets:Array(Array(Tuple(UInt32, String, UInt8, String, String, String, UInt8)))}[indexOf({pageload_projects:Array(UInt64)}, project_id)])
               AS request
)
GROUP BY target
UNION ALL
SELECT request.1 AS target, sum(calls) AS samples,
       sum(if(request.7 = 1, toFloat64(s4xx + s5xx), duration_sum)) AS total,
       quantilesExactWeightedInterpolatedArray(0.5, 0.75, 0.9, 0.95, 0.99)(
           arrayMap(k -> ${duration_hist_value}, dur_hist.1), dur_hist.2) AS quantiles
FROM
(
    SELECT project_id, path, environment, release, browser, calls, duration_sum, dur_hist, s4xx, s5xx,
           transform(toUInt64(CAST(grain, 'UInt16')) * 4294967296 + toUInt32(start), {period_keys:Array(UInt64)},
                     {period_masks:Array(UInt64)}, toUInt64(0)) AS mask
    FROM endpoint_call_periods FINAL
    WHERE project_id IN {api_projects:Array(UInt64)} AND source = 'server'
      AND ${period_tiles}
)
ARRAY JOIN arrayFilter(x -> bitTest(mask, x.3) AND path LIKE x.2 AND (x.4 = '' OR environment = x.4)
                            AND (x.5 = '' OR release = x.5) AND (x.6 = '' OR browser = x.6),
                       {api_targets:Array(Array(Tuple(UInt32, String, UInt8, String, String, String, UInt8)))}[indexOf({api_projects:Array(UInt64)}, project_id)])
           AS request
GROUP BY target
SETTINGS ${view_settings}
