-- The newest probes of one uptime monitor, for its page: status, answer code and timings, TLS days left.
SELECT timestamp, status, http_code, ttfb_ms, total_ms, tls_days_left, error
FROM monitor_checks
WHERE org_id = {org_id:UInt64}
  AND project_id = {project_id:UInt64}
  AND monitor_id = {monitor_id:UInt64}
ORDER BY timestamp DESC
LIMIT {limit:UInt32}
