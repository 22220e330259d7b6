-- Occurrences of one issue, newest first, one keyset page after (cursor_ts, cursor_id).
-- Filtering by fingerprint hits the events sort key (project_id, fingerprint, timestamp).
SELECT
    event_id,
    timestamp,
    user_id,
    user_email,
    user_name,
    user_ip,
    environment,
    release,
    service,
    server_name,
    transaction,
    request_method,
    request_url,
    browser_name,
    browser_version,
    os_name,
    os_version,
    level
FROM events
WHERE project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND fingerprint IN {fingerprints:Array(String)}
  AND issue_id = {issue_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')}
  AND timestamp <= {until:DateTime64(3, 'UTC')}
  AND (
    {cursor_id:String} = ''
    OR (timestamp, event_id) < ({cursor_ts:DateTime64(3, 'UTC')}, toUUIDOrZero({cursor_id:String}))
  )
ORDER BY timestamp DESC, event_id DESC
LIMIT 1 BY event_id
LIMIT {limit:UInt32}
