-- The issue of each of some events of one project, by event id (the feedback list's issue column and
-- filter); the event_id bloom filter index skips the granules that cannot hold them.
SELECT
    event_id,
    any(issue_id) AS issue_id
FROM events
WHERE org_id = {org_id:UInt64}
  AND project_id = {project_id:UInt64}
  AND event_id IN (SELECT toUUIDOrZero(arrayJoin({event_ids:Array(String)})))
GROUP BY event_id
