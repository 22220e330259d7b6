-- The fingerprints of the stored events of some issues of one project: each one's latest exception type and
-- its events, most events first. The issue_id bloom filter skips most granules.
SELECT fingerprint, argMax(exception_type, timestamp) AS exception_type, uniqExact(event_id) AS events
FROM events
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
GROUP BY fingerprint
ORDER BY events DESC, fingerprint
