-- The error events of each trace of a search's answer (any project of the organization), a day around the
-- traces' matching spans.
SELECT trace_id, uniqExact(event_id) AS errors
FROM events
WHERE org_id = {org_id:UInt64} AND trace_id IN {trace_ids:Array(String)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 DAY
  AND timestamp < {until:DateTime64(3, 'UTC')} + INTERVAL 1 DAY
GROUP BY trace_id
SETTINGS ${view_settings}
