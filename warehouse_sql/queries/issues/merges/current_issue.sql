-- The issue each of some fingerprints of one project is in now (its stored events' issue_id).
SELECT fingerprint, any(issue_id) AS issue_id
FROM events
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND fingerprint IN {fingerprints:Array(String)}
GROUP BY fingerprint
