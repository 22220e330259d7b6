-- Explore's `pageloads` rows as state rows (stacklens/explore/pageload_states.py), for a question whose fields are
-- all dimensions `pageload_periods` keeps (environment, release, browser, page): the rows of the periods that tile
-- [since, {states_until}) ({periods}: (grain, start) from ViewFilters.periods of that span, as macro period_tiles
-- names them; not the macro itself, whose bounds read {since} and {until} as DateTime while the raw rows of the
-- same statement — the tail, an error rate's events — read them as DateTime64) of the organization's projects, and
-- after them the page loads of [{states_until}, until) from `transactions` (the tail the pipelines' tick has not
-- folded in yet) each as a state row of one page load, so no row is left out and none is counted twice. Columns:
-- ts (a period's start, a page load's time), f_<field>, and per metric its count (s_*_n), sum (s_*_sum) and 1 %
-- log histogram (s_*_hist: (bucket values, counts), the raw rows' stored `*_bucket`, the same values the facts
-- keep): a percentile is the weighted quantile of the same (value, count) pairs as over the raw rows, so the
-- figure is the same. INP is the page load's own (`own_inp_*`, migration 0320: the measurement, as the raw rows'
-- `vital_inp`), not the facts' `inp_*`, which also take it from later interaction spans; DOM ready is not here: the
-- facts also take it from later spans.
SELECT start AS ts, environment AS f_environment, release AS f_release, browser AS f_browser, page AS f_page,
       views AS s_views, load_sum AS s_load_sum, load_hist AS s_load_hist,
       ttfb_n AS s_ttfb_n, ttfb_sum AS s_ttfb_sum, ttfb_hist AS s_ttfb_hist,
       fcp_n AS s_fcp_n, fcp_hist AS s_fcp_hist, lcp_n AS s_lcp_n, lcp_hist AS s_lcp_hist,
       own_inp_n AS s_inp_n, own_inp_hist AS s_inp_hist, cls_n AS s_cls_n, cls_hist AS s_cls_hist
FROM pageload_periods FINAL
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND (grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))}
UNION ALL
SELECT toDateTime(timestamp, 'UTC') AS ts, environment, release, browser_name, page,
       toUInt64(1), duration_ms, ([load_bucket], CAST([1], 'Array(UInt32)')),
       toUInt64(ttfb_bucket IS NOT NULL), ifNull(vital_ttfb, 0), (if(ttfb_bucket IS NULL, CAST([], 'Array(Float32)'), [assumeNotNull(ttfb_bucket)]),
        CAST(if(ttfb_bucket IS NULL, [], [1]), 'Array(UInt32)')),
       toUInt64(fcp_bucket IS NOT NULL), (if(fcp_bucket IS NULL, CAST([], 'Array(Float32)'), [assumeNotNull(fcp_bucket)]),
        CAST(if(fcp_bucket IS NULL, [], [1]), 'Array(UInt32)')),
       toUInt64(lcp_bucket IS NOT NULL), (if(lcp_bucket IS NULL, CAST([], 'Array(Float32)'), [assumeNotNull(lcp_bucket)]),
        CAST(if(lcp_bucket IS NULL, [], [1]), 'Array(UInt32)')),
       toUInt64(inp_bucket IS NOT NULL), (if(inp_bucket IS NULL, CAST([], 'Array(Float32)'), [assumeNotNull(inp_bucket)]),
        CAST(if(inp_bucket IS NULL, [], [1]), 'Array(UInt32)')),
       toUInt64(cls_bucket IS NOT NULL), (if(cls_bucket IS NULL, CAST([], 'Array(Float32)'), [assumeNotNull(cls_bucket)]),
        CAST(if(cls_bucket IS NULL, [], [1]), 'Array(UInt32)'))
FROM transactions
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {states_until:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND op = 'pageload'
