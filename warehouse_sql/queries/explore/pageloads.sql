-- Explore's `pageloads` dataset (stacklens/explore/datasets.py): one row per page load (op `pageload`
-- transaction, as `pageload_facts` holds them) of the organization's projects in the window [since, until).
-- Columns: ts, uid, tags, f_<field>, m_<metric>. A vital the browser did not report is NULL, not 0 ms. The vitals
-- are the table's own columns (vital_*, migration 0013: the `measurements` map's values, written with each row),
-- so a percentile of one reads that column, not every key and value of every page load's map. `h_<metric>`: the
-- value as the views' states keep it, its 1 % log bucket's value (the `*_bucket` columns, migration 0015: macro
-- pageload_hist_value, the expression of `pageload_facts`' histograms): Explore's percentiles (and the averages
-- of the vitals the states keep no sum of) are taken over it with the views' function, so they equal the views',
-- the budgets' and the alerts' figures.
SELECT timestamp AS ts, user_key AS uid, tags,
       environment AS f_environment, release AS f_release, page AS f_page, browser_name AS f_browser,
       os_name AS f_os, transaction AS f_transaction, url AS f_url, status AS f_status,
       toFloat64(http_status) AS f_http_status,
       1 AS m_page_loads,
       duration_ms AS m_load_time_ms,
       vital_ttfb AS m_ttfb_ms, vital_fcp AS m_fcp_ms, vital_lcp AS m_lcp_ms, vital_inp AS m_inp_ms,
       vital_cls AS m_cls, vital_dom_ready AS m_dom_ready_ms,
       load_bucket AS h_load_time_ms, ttfb_bucket AS h_ttfb_ms, fcp_bucket AS h_fcp_ms, lcp_bucket AS h_lcp_ms,
       inp_bucket AS h_inp_ms, cls_bucket AS h_cls, dom_ready_bucket AS h_dom_ready_ms
FROM transactions
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND op = 'pageload'
