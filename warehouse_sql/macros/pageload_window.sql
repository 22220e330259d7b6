-- The page-load rows (per period, page and filter dimensions) of the window [since, until) and filters
-- (environment, release, browser, page; '' = any) as state rows: the rows of `pageload_periods` of the periods
-- that tile the window (macro period_tiles; single days instead of blocks when a view that groups by `day` asks for
-- them). Used as `FROM ${pageload_window}`;
-- the views merge the rows per key (sums, min(first_ts), sumMap of each histogram). `fastest` / `slowest`: the
-- period's 3 fastest / slowest page loads (load time, event id, start, score); a query that does not select them
-- does not read them.
(
    SELECT toDate(start) AS day, page, environment, release, browser, views, first_ts, load_sum, load_hist,
           ttfb_sum, ttfb_n, ttfb_hist, dom_sum, dom_n, dom_hist, resource_sum, resource_n, lcp_n, lcp_hist, inp_n,
           inp_hist, cls_n, cls_hist, fcp_n, fcp_hist, score_sum, score_n, api_calls, api_errors, api_hist, js_bytes,
           dist, fastest, slowest
    FROM pageload_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ${period_tiles}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
)
