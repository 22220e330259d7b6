-- Uptime of a projects' uptime checks per bucket of a time chart (beside its release markers): probes and ok
-- probes per hour or day in [since, until); buckets without a probe are absent (drawn as a gap, never 0 %).
-- The share is uptime_pct's (ok probes over probes, stacklens/performance/window_values.py).
SELECT toStartOfInterval(timestamp, toIntervalSecond({bucket_seconds:UInt32}), 'UTC') AS bucket,
       count() AS probes,
       countIf(status = 'ok') AS ok
FROM monitor_checks
WHERE org_id = {org_id:UInt64}
  AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
GROUP BY bucket
ORDER BY bucket
