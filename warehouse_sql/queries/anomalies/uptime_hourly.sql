-- An anomaly rule's `uptime_pct` series (stacklens/anomalies/series.py): per hour of [since, until), the probes of
-- the project's uptime checks and those that answered the expected status (ok), as the monitor pages count them.
-- {monitor} '*' = every uptime check of the project.
SELECT toStartOfHour(timestamp) AS hour, count() AS probes, countIf(status = 'ok') AS ok
FROM monitor_checks
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND ({monitor:String} = '*' OR monitor_slug = {monitor:String})
GROUP BY hour
ORDER BY hour
