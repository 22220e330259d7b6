-- Many uptime windows (metric uptime_pct: budgets, `performance_budget` rules and their previews) in one read
-- of the probes (`monitor_checks`, migration 0220), as stacklens/performance/window_values.py asks. Each target
-- is (id, monitor slug pattern, since, until): its window's bounds in whole minutes, as every window is cut.
-- Uptime is the share of probes that were ok, as the monitor's page counts it (monitors/uptime_daily.sql).
SELECT request.1 AS target, count() AS samples, countIf(status = 'ok') AS ok
FROM monitor_checks
ARRAY JOIN arrayFilter(x -> monitor_slug LIKE x.2 AND timestamp >= x.3 AND timestamp < x.4,
                       {targets:Array(Array(Tuple(UInt32, String, DateTime('UTC'), DateTime('UTC'))))}[indexOf({project_ids:Array(UInt64)}, project_id)])
           AS request
WHERE project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime('UTC')} AND timestamp < {until:DateTime('UTC')}
GROUP BY target
SETTINGS ${view_settings}
