-- One event of one issue with its stored (scrubbed) payload.
SELECT
    event_id,
    issue_id,
    timestamp,
    received_at,
    environment,
    release,
    service,
    level,
    platform,
    title,
    culprit,
    payload
FROM events
WHERE project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND fingerprint IN {fingerprints:Array(String)}
  AND issue_id = {issue_id:UInt64}
  AND event_id = toUUIDOrZero({event_id:String})
ORDER BY received_at DESC
LIMIT 1
