-- Status changes of one issue, newest first.
SELECT at, actor, from_status, to_status, reason, release, ignore_until_events, ignore_until
FROM issue_history
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
ORDER BY at DESC
LIMIT 200
