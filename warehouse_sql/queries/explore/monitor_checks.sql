-- Explore's `monitor_checks` dataset (stacklens/explore/datasets.py): one row per uptime probe of the
-- organization's projects in the window [since, until) (migration 0220). Columns: ts, uid (none: ''), tags
-- (none), f_<field> per field of the dataset, m_probe_total_ms; uptime_pct is a share of the rows' status,
-- and a count of rows is the `monitor_probes` metric.
SELECT timestamp AS ts, '' AS uid, map() AS tags,
       monitor_slug AS f_monitor, status AS f_status, toFloat64(http_code) AS f_http_code,
       toFloat64(ifNull(tls_days_left, -1)) AS f_tls_days_left,
       total_ms AS m_probe_total_ms
FROM monitor_checks
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
