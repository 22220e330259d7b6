-- The newest event id of one issue within a time range (the detail page opens on it).
SELECT event_id
FROM events
WHERE project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND fingerprint IN {fingerprints:Array(String)}
  AND issue_id = {issue_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')}
  AND timestamp <= {until:DateTime64(3, 'UTC')}
ORDER BY timestamp DESC, event_id DESC
LIMIT 1
