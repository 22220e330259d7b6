-- The error events of a trace (a log record's trace link lists them): each with its issue, newest first.
SELECT toString(event_id) AS event_id, issue_id, title, timestamp
FROM events
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND JSONExtractString(payload, 'contexts', 'trace', 'trace_id') = {trace_id:String}
  AND timestamp >= {around:DateTime64(6, 'UTC')} - INTERVAL 1 DAY
  AND timestamp < {around:DateTime64(6, 'UTC')} + INTERVAL 1 DAY
ORDER BY timestamp DESC
LIMIT 20
