-- Every fingerprint of an issue that holds merged ones (stacklens.issues.merges): the issue_id bloom filter
-- index skips most granules; later event reads then filter on the sort key with all of them.
SELECT DISTINCT fingerprint
FROM events
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
