-- The first event of each issue of {firsts} ((issue id, its first seen): its first event's own time), what the
-- ownership rules look at. The time bounds (the earliest and latest of those times) let the events_by_time
-- projection answer; the pair keeps each issue's first event only.
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
  AND timestamp <= {until:DateTime64(3, 'UTC')}
  AND (issue_id, timestamp) IN {firsts:Array(Tuple(UInt64, DateTime64(3, 'UTC')))}
GROUP BY issue_id
