-- The fingerprint of an issue the `issues` mart has not materialized yet (the issue_id bloom filter index
-- skips most granules); later event reads then filter on the sort key.
SELECT fingerprint
FROM events
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
LIMIT 1
