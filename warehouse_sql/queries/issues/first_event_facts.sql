-- The first event of each of {issue_ids} (all first seen at or after {since}, so the time filter keeps every one
-- of their events and lets the events_by_time projection answer): what the ownership rules look at.
SELECT
    issue_id,
    argMin(payload, timestamp) AS payload,
    argMin(request_url, timestamp) AS request_url,
    argMin(release, timestamp) AS release,
    argMin(tags, timestamp) AS tags
FROM events
WHERE org_id = {org_id:UInt64}
  AND project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')}
  AND issue_id IN {issue_ids:Array(UInt64)}
GROUP BY issue_id
