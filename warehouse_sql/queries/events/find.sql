-- One event of an organization by id alone (the JSON API's /api/events/{event_id}); the event_id bloom
-- filter index skips the granules that cannot hold it.
SELECT
    event_id,
    project_id,
    issue_id,
    fingerprint,
    timestamp
FROM events
WHERE org_id = {org_id:UInt64}
  AND has({project_ids:Array(UInt64)}, project_id)
  AND event_id = toUUIDOrZero({event_id:String})
ORDER BY received_at DESC
LIMIT 1
