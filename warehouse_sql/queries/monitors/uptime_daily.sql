-- Uptime per day of one monitor: the share of its probes that were ok, with their count and the median
-- total time; days without a probe are absent (drawn as no data, never as 0 %).
SELECT
    toDate(timestamp) AS day,
    count() AS probes,
    round(100 * countIf(status = 'ok') / count(), 3) AS uptime_pct,
    round(quantile(0.5)(total_ms), 1) AS median_total_ms
FROM monitor_checks
WHERE org_id = {org_id:UInt64}
  AND project_id = {project_id:UInt64}
  AND monitor_id = {monitor_id:UInt64}
  AND timestamp >= now64(3) - toIntervalDay({days:UInt16})
GROUP BY day
ORDER BY day
