-- The page-load rows (per period, page and filter dimensions) of the window [since, until) and filters
-- (environment, release, browser, page; '' = any) as state rows: the whole hours [whole_start, whole_end) from
-- `pageload_periods` as the hours, days and blocks of days `periods` (hours, start) that tile them
-- (PerfFilters.periods; a view that groups by `day` is given single days, never blocks), and each page load of the
-- partial edge hours from `pageload_facts` as its own state row (macro pageload_state_row, as the fill sees it).
-- Used as `FROM ${pageload_window}`; the views merge the rows per key (sums, min(first_ts), sumMap of each
-- histogram). `fastest` / `slowest`: the part's 3 fastest / slowest page loads (load time, event id, start, score;
-- an edge page load is its own); a query that does not select them does not read them.
(
    SELECT toDate(start) AS day, page, environment, release, browser, views, first_ts, load_sum, load_hist,
           ttfb_sum, ttfb_n, ttfb_hist, dom_sum, dom_n, dom_hist, resource_sum, resource_n, lcp_n, lcp_hist, inp_n,
           inp_hist, cls_n, cls_hist, fcp_n, fcp_hist, score_sum, score_n, api_calls, api_errors, api_hist, js_bytes,
           dist, fastest, slowest
    FROM pageload_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND (hours, start) IN {periods:Array(Tuple(UInt16, DateTime('UTC')))}
      AND start >= {whole_start:DateTime64(3, 'UTC')} AND start < {whole_end:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
    UNION ALL
    SELECT toDate(ts) AS day, page, environment, release, browser,
           ${pageload_state_row},
           [(load_ms, toString(event_id), ts, score)] AS fastest, fastest AS slowest
    FROM pageload_facts FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ((ts >= {since:DateTime64(3, 'UTC')} AND ts < {whole_start:DateTime64(3, 'UTC')})
           OR (ts >= {whole_end:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}))
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
)
