-- Every status change of one issue, oldest first (`issue_history`; the workflow's own reads, unbounded, where
-- issues/history.sql is the page's newest 200).
SELECT at, actor, from_status, to_status, reason, release, ignore_until_events, ignore_until
FROM issue_history
WHERE project_id = {project_id:UInt64} AND issue_id = {issue_id:UInt64}
ORDER BY at, to_status
