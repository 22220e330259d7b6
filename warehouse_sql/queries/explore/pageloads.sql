-- Explore's `pageloads` dataset (stacklens/explore/datasets.py): one row per page load (op `pageload`
-- transaction, as `pageload_facts` holds them) of the organization's projects in the window [since, until).
-- Columns: ts, uid, tags, f_<field>, m_<metric>. A vital the browser did not report is NULL, not 0 ms.
SELECT timestamp AS ts, user_key AS uid, tags,
       environment AS f_environment, release AS f_release, page AS f_page, browser_name AS f_browser,
       os_name AS f_os, transaction AS f_transaction, url AS f_url, status AS f_status,
       toFloat64(http_status) AS f_http_status,
       1 AS m_page_loads,
       duration_ms AS m_load_time_ms,
       if(mapContains(measurements, 'ttfb'), measurements['ttfb'], NULL) AS m_ttfb_ms,
       if(mapContains(measurements, 'fcp'), measurements['fcp'], NULL) AS m_fcp_ms,
       if(mapContains(measurements, 'lcp'), measurements['lcp'], NULL) AS m_lcp_ms,
       if(mapContains(measurements, 'inp'), measurements['inp'], NULL) AS m_inp_ms,
       if(mapContains(measurements, 'cls'), measurements['cls'], NULL) AS m_cls,
       if(mapContains(measurements, 'dom_ready'), measurements['dom_ready'], NULL) AS m_dom_ready_ms
FROM transactions
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND op = 'pageload'
